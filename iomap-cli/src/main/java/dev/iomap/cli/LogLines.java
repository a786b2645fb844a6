package dev.iomap.cli;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.logging.ConsoleHandler;
import java.util.logging.Formatter;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * How the {@code iomap} process shows log records (a mount's failed calls, a failed flush...): one line
 * each on standard error, {@code iomap: MESSAGE}, as the command prints its own errors; the stack trace
 * of an attached exception, and debug records, only with {@code --debug}. Without it, the JDK's default
 * handler printed a date line, a level line and the whole stack of every failed FUSE call.
 */
final class LogLines extends Formatter {
    private final boolean debug;

    private LogLines(boolean debug) {
        this.debug = debug;
    }

    /**
     * Replaces the handlers of the process's root logger with one on standard error in this format.
     * Called once, by {@link IomapCli#main}, before any command runs.
     *
     * @param debug whether to show stack traces and debug records
     */
    static void install(boolean debug) {
        Logger root = Logger.getLogger("");
        for (Handler handler : root.getHandlers()) {
            root.removeHandler(handler);
        }
        ConsoleHandler console = new ConsoleHandler();
        console.setFormatter(new LogLines(debug));
        Level level = debug ? Level.FINE : Level.INFO;
        console.setLevel(level);
        root.setLevel(level);
        root.addHandler(console);
    }

    /** @return {@code iomap: } and the message's first line, then with --debug the stack of its exception */
    @Override
    public String format(LogRecord record) {
        String message = formatMessage(record);
        String first = message == null ? "" : message.strip().lines().findFirst().orElse("");
        StringBuilder out = new StringBuilder("iomap: ").append(first).append(System.lineSeparator());
        if (debug && record.getThrown() != null) {
            StringWriter stack = new StringWriter();
            record.getThrown().printStackTrace(new PrintWriter(stack));
            out.append(stack);
        }
        return out.toString();
    }
}

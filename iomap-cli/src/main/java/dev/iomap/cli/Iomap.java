package dev.iomap.cli;

import dev.iomap.cli.jobfile.JobFileException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code iomap} command: {@code bench} (fio job files with write amplification), {@code mkfs},
 * {@code fsck} and {@code stat} over image files.
 *
 * <p>Exit status: 0 on success; 1 when something the user asked for failed (a bad job file, a bad
 * value, fsck found problems, a job stopped on an I/O error); 2 for a command line picocli cannot
 * parse.
 */
@Command(name = "iomap",
        mixinStandardHelpOptions = true,
        versionProvider = Iomap.Version.class,
        description = "The Linux iomap buffered-I/O layer in Java: benchmark, format, check and inspect "
                + "filesystems of the iomap4j adapters.",
        subcommands = {BenchCommand.class, MkfsCommand.class, FsckCommand.class, StatCommand.class, MountCommand.class,
                CommandLine.HelpCommand.class})
public final class Iomap {

    /**
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs a command line with the given streams (tests capture them).
     *
     * @param args the command line
     * @param out standard output
     * @param err standard error (notes, errors, the progress line)
     * @return the exit status
     */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine commandLine = new CommandLine(new Iomap());
        commandLine.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        commandLine.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        commandLine.setExecutionExceptionHandler((exception, failed, parseResult) -> {
            String message = userMessage(exception);
            if (message == null) {
                throw exception;
            }
            failed.getErr().println("iomap: " + message);
            failed.getErr().flush();
            return 1;
        });
        int status = commandLine.execute(args);
        out.flush();
        err.flush();
        return status;
    }

    /** @return the message for an error the user can act on, or null for a bug */
    private static String userMessage(Exception exception) {
        return switch (exception) {
            case UsageException e -> e.getMessage();
            case JobFileException e -> e.getMessage();
            case NoSuchFileException e -> "no such file: " + e.getFile();
            case AccessDeniedException e -> "permission denied: " + e.getFile();
            case IOException e -> e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            default -> null;
        };
    }

    /** @return the program's version, e.g. {@code iomap4j-0.1.0-SNAPSHOT} */
    static String version() {
        Properties properties = new Properties();
        try (InputStream in = Iomap.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read version.properties", e);
        }
        return "iomap4j-" + properties.getProperty("version", "unknown");
    }

    /** Gives picocli's {@code --version} the program's version. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {version()};
        }
    }
}

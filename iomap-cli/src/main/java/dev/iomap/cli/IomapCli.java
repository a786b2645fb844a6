package dev.iomap.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Properties;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;

/**
 * The {@code iomap} command: {@code bench} (fio job files with write amplification), {@code mkfs},
 * {@code fsck}, {@code stat} and {@code mount} over image files, {@code trace} and {@code top} of a running
 * mount, and {@code zookeeper} (a server for cluster mounts on one machine).
 *
 * <p>Exit status: 0 on success; 1 when something the user asked for failed (a bad job file, a bad
 * value, fsck found problems, a job stopped on an I/O error); 2 for a command line picocli cannot
 * parse.
 */
@Command(name = "iomap",
        mixinStandardHelpOptions = true,
        versionProvider = IomapCli.Version.class,
        description = "The Linux iomap buffered-I/O layer in Java: benchmark, format, check and inspect "
                + "filesystems of the iomap4j adapters.",
        subcommands = {BenchCommand.class, MkfsCommand.class, FsckCommand.class, StatCommand.class, FiemapCommand.class, MountCommand.class,
                TraceCommand.class, TopCommand.class, ReportCommand.class,
                ZookeeperCommand.class, ClusterBenchCommand.class, AdaptersCommand.class, ServeCommand.class, CommandLine.HelpCommand.class})
public final class IomapCli {

    /** Declared for parsing and help; {@link #run} reads it from the arguments, before parsing. */
    @SuppressWarnings("unused")
    @Option(names = "--debug", scope = ScopeType.INHERIT,
            description = "on an error, print the Java stack trace too")
    private boolean debug;

    /**
     * Runs a command line and exits with its status. Log records of the process (a mount's failed calls)
     * are shown one line each on stderr, with stacks only with {@code --debug} ({@link LogLines}).
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        LogLines.install(Arrays.asList(args).contains("--debug"));
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
        return run(args, out, err, CommandLine.defaultFactory());
    }

    /**
     * Runs a command line with the given streams and a factory of its commands (the mount server's gives
     * {@code mount} its own way of saying it is mounted, {@link MountCommand.Ready}). Paths on the command
     * line are relative to {@link WorkingDirectory}.
     *
     * @param args the command line
     * @param out standard output
     * @param err standard error
     * @param factory makes the command objects
     * @return the exit status
     */
    static int run(String[] args, PrintStream out, PrintStream err, CommandLine.IFactory factory) {
        CommandLine commandLine = new CommandLine(new IomapCli(), factory);
        commandLine.registerConverter(Path.class, WorkingDirectory::resolve);
        commandLine.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        commandLine.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        boolean printStacks = Arrays.asList(args).contains("--debug");
        commandLine.setExecutionExceptionHandler((exception, failed, parseResult) -> {
            report(failed.getErr(), exception, printStacks);
            return 1;
        });
        int status;
        try {
            status = commandLine.execute(args);
        } catch (OutOfMemoryError | StackOverflowError e) {
            report(commandLine.getErr(), e, printStacks);
            status = 1;
        }
        out.flush();
        err.flush();
        return status;
    }

    /** Prints {@code iomap: MESSAGE} on one line, and the stack trace only with --debug. */
    private static void report(PrintWriter err, Throwable error, boolean debug) {
        err.println("iomap: " + message(error));
        if (debug) {
            error.printStackTrace(err);
        }
        err.flush();
    }

    /** @return one line saying what went wrong, with no Java class names */
    static String message(Throwable error) {
        String message = switch (error) {
            case NoSuchFileException e -> "no such file: " + e.getFile();
            case AccessDeniedException e -> "permission denied: " + e.getFile();
            case OutOfMemoryError e -> "out of memory: use smaller sizes (or give Java more memory)";
            case StackOverflowError e -> "internal error: stack overflow (give --debug for the stack trace)";
            default -> error.getMessage();
        };
        if (message == null || message.isBlank()) {
            return "internal error (" + error.getClass().getSimpleName().replace("Exception", "")
                    + "; give --debug for the stack trace)";
        }
        String firstLine = message.strip().lines().findFirst().orElse(message);
        return firstLine.replaceAll("\\b(java|dev|jdk|sun)\\.[\\w.$]*(Exception|Error): ", "");
    }

    /** @return the program's version, e.g. {@code iomap4j-0.1.0-SNAPSHOT} */
    static String version() {
        Properties properties = new Properties();
        try (InputStream in = IomapCli.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(in);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read version.properties", e);
        }
        return "iomap4j-" + properties.getProperty("version", "unknown");
    }

    /**
     * Gives picocli's {@code --version} the program's version, then the adapters it ships, one line:
     * {@code adapters: NAME, NAME (zoned), ...} (sorted; "(zoned)" after one that needs a zoned device).
     */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String adapters = AdaptersCommand.sorted().stream()
                    .map(adapter -> adapter.name() + (adapter.requiresZonedDevice() ? " (zoned)" : ""))
                    .collect(Collectors.joining(", "));
            return new String[] {version(), "adapters: " + adapters};
        }
    }
}

package dev.iomap.cli;

import dev.iomap.cli.observe.MountRuntime;
import dev.iomap.cli.observe.ObservationClient;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code iomap trace MOUNTPOINT}: streams a running mount's trace events (the kernel's iomap, gfs2 and
 * bcachefs tracepoints as JFR events, recorded in the mount's process while this runs) one line each, as
 * {@code trace-cmd stream} prints them, until Ctrl-C or the unmount.
 */
@Command(name = "trace", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Streams the trace events of a running iomap mount, one line each, like trace-cmd stream.",
                "Events are named after the kernel's tracepoints: iomap:iomap_writeback_folio, iomap:iomap_add_to_ioend,"
                        + " iomap:iomap_iter, ..., gfs2:gfs2_glock_state_change, gfs2:gfs2_demote_rq, gfs2:gfs2_promote,"
                        + " bcachefs:checksum_error, bcachefs:folio_reservation_get (docs/kernel-map.md).",
                "Only the user who mounted may attach. Ctrl-C stops; the mount goes on."})
final class TraceCommand implements Callable<Integer> {

    @Spec
    private CommandSpec spec;

    @Parameters(index = "0", paramLabel = "MOUNTPOINT", description = "where iomap mount mounted the image")
    private Path mountPoint;

    @Option(names = {"-e", "--events"}, paramLabel = "GLOB[,GLOB]",
            description = "the events: globs over SYSTEM:NAME or NAME, e.g. 'iomap:*', 'iomap_writeback_folio,gfs2:*'"
                    + " (default: all)")
    private String events;

    @Option(names = "--inode", paramLabel = "N", description = "only events about inode N")
    private Long inode;

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        try (ObservationClient client = ObservationClient.connect(MountRuntime.forCurrentUser(), mountPoint)) {
            client.requestTrace(events, inode == null ? -1 : inode);
            String header = client.readLine();
            if (header != null) {
                spec.commandLine().getErr().println("iomap: " + header.substring(2) + " at "
                        + client.mount().mountPoint() + " (pid " + client.mount().pid() + "); Ctrl-C stops");
                spec.commandLine().getErr().flush();
            }
            for (String line = client.readLine(); line != null; line = client.readLine()) {
                out.println(line);
                out.flush();
            }
        }
        return 0;
    }
}

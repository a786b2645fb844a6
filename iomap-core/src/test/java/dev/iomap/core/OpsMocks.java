package dev.iomap.core;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.mock;

import dev.iomap.spi.IomapOps;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Mockito mocks of the adapter interfaces whose I/O hooks ({@code readOps}, {@code writeOps},
 * {@code writebackRange}, {@code writebackSubmit}) keep their default behaviour (read and write the
 * device, add what {@code mapBlocks} maps to the ioend), so a test stubs only the mapping calls it is
 * about.
 */
final class OpsMocks {
    private OpsMocks() {
    }

    /** @return a mock whose {@code readOps()} and {@code writeOps()} are the defaults */
    static IomapOps iomapOps() {
        IomapOps ops = mock(IomapOps.class);
        doCallRealMethod().when(ops).readOps();
        doCallRealMethod().when(ops).writeOps();
        return ops;
    }

    /**
     * @return a mock whose {@code writebackRange} adds what its (stubbed) {@code mapBlocks} answers, and
     *     whose {@code writebackSubmit} writes the ioend to the device as the default does
     */
    static MapBlocksWriteback writebackOps() {
        MapBlocksWriteback ops = mock(MapBlocksWriteback.class);
        try {
            doCallRealMethod().when(ops).writebackRange(any(), anyLong(), anyLong(), anyLong());
            doCallRealMethod().when(ops).writebackSubmit(any(), any());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ops;
    }
}

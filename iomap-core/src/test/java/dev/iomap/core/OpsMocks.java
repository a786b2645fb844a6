package dev.iomap.core;

import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doCallRealMethod;
import static org.mockito.Mockito.mock;

import dev.iomap.spi.IomapOps;
import dev.iomap.spi.WritebackOps;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * Mockito mocks of the adapter interfaces whose I/O hooks ({@code readOps}, {@code submitIoend}) keep
 * their default behaviour (read and write the device), so a test stubs only the mapping calls it is
 * about.
 */
final class OpsMocks {
    private OpsMocks() {
    }

    /** @return a mock whose {@code readOps()} is the default ({@code ReadOps.DEVICE}) */
    static IomapOps iomapOps() {
        IomapOps ops = mock(IomapOps.class);
        doCallRealMethod().when(ops).readOps();
        return ops;
    }

    /** @return a mock whose {@code submitIoend} writes the ioend to the device as the default does */
    static WritebackOps writebackOps() {
        WritebackOps ops = mock(WritebackOps.class);
        try {
            doCallRealMethod().when(ops).submitIoend(any(), any(), any(), any());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return ops;
    }
}

package dev.iomap.core;

import java.io.IOException;

/** A piece of work that may fail with an {@link IOException}. */
@FunctionalInterface
public interface IoRunnable {

    /** @throws IOException if the work fails */
    void run() throws IOException;
}

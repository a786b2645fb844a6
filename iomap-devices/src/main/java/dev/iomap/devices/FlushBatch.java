package dev.iomap.devices;

import java.io.IOException;

/**
 * Lets concurrent flushes of one device share a sync: group commit for cache flushes. A flush must make
 * every write that completed before it was asked for durable, so one sync covers every request made
 * before the sync started. A request that finds a sync running waits for it to end and then, unless a
 * later sync already covered it, starts the next one itself, for everyone who asked in the meantime.
 * Eight threads that each write and fdatasync then cost about two syncs per round instead of eight, as
 * the kernel's flush machinery ({@code blk-flush.c}) and a journal's group commit do.
 *
 * <p>A failed sync covers nobody: each waiting request goes on to a sync of its own and gets that
 * one's outcome. Waiting is not interruptible; an interrupt is kept and set again on return.
 * Thread-safe.
 */
final class FlushBatch {
    /** The sync itself: {@code fdatasync} of the backing file. */
    @FunctionalInterface
    interface Sync {
        /** Runs one sync. */
        void run() throws IOException;
    }

    private long requested;
    private long covered;
    private boolean running;
    private long syncs;

    /**
     * Returns once a sync that started after this call began has succeeded.
     *
     * @param sync what a sync does
     * @throws IOException the failure of the sync this request ran itself
     */
    void flush(Sync sync) throws IOException {
        long covers;
        boolean interrupted = false;
        synchronized (this) {
            long mine = ++requested;
            while (running && covered < mine) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (covered >= mine) {
                return;
            }
            running = true;
            covers = requested;
            syncs++;
        }
        boolean done = false;
        try {
            sync.run();
            done = true;
        } finally {
            synchronized (this) {
                running = false;
                if (done) {
                    covered = Math.max(covered, covers);
                }
                notifyAll();
            }
        }
    }

    /** @return flushes asked for so far */
    synchronized long requested() {
        return requested;
    }

    /** @return syncs run so far */
    synchronized long syncs() {
        return syncs;
    }
}

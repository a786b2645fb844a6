package dev.iomap.device;

import java.util.Objects;

/**
 * A hint from a submitter to the block devices below it: the writes issued inside {@link #run} are
 * waited for by this very thread right after they are issued (an fsync's data-integrity writeback),
 * so a device that can do a write in the calling thread should, instead of handing it to a thread of
 * its own and waking the caller again when it is done. The counterpart of the kernel's
 * {@code REQ_SYNC} on a bio submitted from the task that will wait for it.
 *
 * <p>The hint belongs to the thread (a {@link ScopedValue} bound for the duration of {@link #run}), so
 * it reaches the device through any adapter and any wrapping device that issues the write from the same
 * thread, and is lost, harmlessly, where a layer issues it from another thread. It never changes what a
 * write does, only where it runs: every device must remain correct whether it honours the hint or not,
 * and a write that honours it returns an already completed future, whose callbacks then run in the
 * caller (as with a device that always completes at once, like a RAM device).
 */
public final class SyncSubmit {
    private static final ScopedValue<Boolean> CALLER_WAITS = ScopedValue.newInstance();

    private SyncSubmit() {
    }

    /**
     * Runs {@code submission} in this thread with the hint set: the writes it issues are waited for by
     * this thread at once. Nested calls keep the hint; it ends when the outermost call returns.
     *
     * @param submission what issues the writes; its unchecked exceptions propagate
     * @throws NullPointerException if {@code submission} is null
     */
    public static void run(Runnable submission) {
        Objects.requireNonNull(submission, "submission");
        ScopedValue.where(CALLER_WAITS, Boolean.TRUE).run(submission);
    }

    /**
     * @return whether this thread is inside {@link #run}: a device may then do a write in the calling
     *     thread and return it completed
     */
    public static boolean callerWaits() {
        return CALLER_WAITS.orElse(Boolean.FALSE);
    }
}

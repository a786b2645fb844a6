package dev.iomap.adapter.support.lock;

import static org.assertj.core.api.Assertions.fail;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** Test helpers: run a call on a new thread, and wait (without sleeping) until a thread blocks. */
final class Threads {
    private Threads() {
    }

    /** A call running on its own thread, and its outcome. */
    record Running<T>(Thread thread, CompletableFuture<T> result) {
        T join() throws Exception {
            try {
                return result.get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (e.getCause() instanceof Exception cause) {
                    throw cause;
                }
                throw e;
            }
        }
    }

    static <T> Running<T> start(String name, Callable<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread thread = Thread.ofPlatform().name(name).start(() -> {
            try {
                result.complete(call.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return new Running<>(thread, result);
    }

    /** Spins until {@code thread} waits (parked in a condition wait) or fails after 30 s. */
    static void awaitBlocked(Thread thread) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            Thread.State state = thread.getState();
            if (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING) {
                return;
            }
            if (state == Thread.State.TERMINATED) {
                fail(thread.getName() + " ended instead of waiting");
            }
            if (System.nanoTime() > deadline) {
                fail(thread.getName() + " never waited; state " + state);
            }
            Thread.onSpinWait();
        }
    }
}

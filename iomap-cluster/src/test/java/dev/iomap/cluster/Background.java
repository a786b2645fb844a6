package dev.iomap.cluster;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/** A test action on a thread of its own, whose result or failure the test joins. */
final class Background<T> {
    /** What runs. */
    @FunctionalInterface
    interface Action<T> {
        T run() throws Exception;
    }

    private final CompletableFuture<T> result = new CompletableFuture<>();
    private final Thread thread;

    private Background(String name, Action<T> action) {
        thread = new Thread(() -> {
            try {
                result.complete(action.run());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, name);
        thread.setDaemon(true);
    }

    static <T> Background<T> start(String name, Action<T> action) {
        Background<T> background = new Background<>(name, action);
        background.thread.start();
        return background;
    }

    Thread thread() {
        return thread;
    }

    /** @return the result, waiting up to 30 s; its exception as the cause of an ExecutionException */
    T join() throws Exception {
        return result.get(30, TimeUnit.SECONDS);
    }

    /** @return what the action threw (fails if it returned) */
    Throwable failure() throws Exception {
        try {
            T value = result.get(30, TimeUnit.SECONDS);
            throw new AssertionError("expected a failure, got " + value);
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    boolean isDone() {
        return result.isDone();
    }
}

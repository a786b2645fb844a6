package dev.iomap.core.mm;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A throttled writer's pause ({@link Flusher#throttle}) must not outlive the condition it waits for.
 *
 * <p>The writer counts itself as throttled, then takes the flusher's lock and waits; writeback's end
 * wakes throttled writers only when it sees one counted. A pause that waited unconditionally would
 * lose a wake-up sent between the count and the wait, and the writer would sleep its whole pause with
 * its limit already met. So the pause checks the limit under the lock the wake-up is sent under. These
 * tests give the pause an hour: without the check the first one would sleep it (and fail on its
 * timeout).
 */
class FlusherThrottleTest {

    /** No flusher thread: {@code throttle} only kicks one, which needs no cache. */
    private final Flusher flusher = new Flusher(null);

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aWriterWhoseLimitIsMetBeforeItWaitsDoesNotWait() {
        AtomicInteger checks = new AtomicInteger();
        // The wake-up already happened (nobody was counted, so it signalled nobody); the check sees it.
        flusher.wakeThrottled();

        flusher.throttle(Duration.ofHours(1), () -> {
            checks.incrementAndGet();
            assertThat(flusher.hasThrottled()).as("counted before the check").isTrue();
            return false;
        });

        assertThat(checks).hasValue(1);
        assertThat(flusher.hasThrottled()).isFalse();
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void aWaitingWriterIsWokenWhenItsLimitIsMet() throws Exception {
        AtomicBoolean over = new AtomicBoolean(true);
        CountDownLatch checked = new CountDownLatch(1);
        Thread writer = Thread.ofPlatform().name("throttled-writer").start(() ->
                flusher.throttle(Duration.ofHours(1), () -> {
                    checked.countDown();
                    return over.get();
                }));
        checked.await();
        // The check ran under the lock and said "over", so the writer is in (or entering) the wait,
        // which releases the lock: the wake-up below takes the same lock and cannot slip in before it.
        over.set(false);
        flusher.wakeThrottled();

        writer.join();
        assertThat(flusher.hasThrottled()).isFalse();
    }
}

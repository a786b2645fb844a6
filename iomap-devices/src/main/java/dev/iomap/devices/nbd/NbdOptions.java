package dev.iomap.devices.nbd;

import java.time.Duration;
import java.util.Objects;

/**
 * How an {@link NbdBlockDevice} talks to its server. Immutable; the {@code with...} methods return
 * copies.
 *
 * @param reconnectWindow how long the device keeps trying to connect again after its connection
 *     drops, counted from the drop; requests wait meanwhile, and fail with
 *     {@link NbdConnectionLostException} (EIO) when it has passed. Zero: no second try.
 * @param replyTimeout how long a request may wait for its reply on a live connection before the
 *     connection is taken for dead (and dropped, then tried again within {@link #reconnectWindow}),
 *     as the kernel's nbd driver times out requests; it covers a server or a network path that hangs
 *     without closing the connection
 * @param connectTimeout how long one connection attempt, TCP connect and negotiation together, may
 *     take
 * @param forceUnitAccess whether every write carries {@code NBD_CMD_FLAG_FUA}, so that its
 *     completion already means it is durable (write-through); the server must offer FUA. Off, writes
 *     are durable once a later {@link NbdBlockDevice#flush()} returns, as for any device
 * @param structuredReplies whether to ask the server for structured replies
 *     ({@code NBD_OPT_STRUCTURED_REPLY}); a server that refuses them gets simple replies anyway
 * @param replayLimitBytes how many bytes of written-but-not-yet-flushed data the device keeps to send
 *     again after a reconnect (see {@link NbdBlockDevice}); past it the device flushes on its own
 */
public record NbdOptions(Duration reconnectWindow, Duration replyTimeout, Duration connectTimeout,
        boolean forceUnitAccess, boolean structuredReplies, long replayLimitBytes) {

    /** The defaults: 30 s to reconnect, 60 s for a reply, 10 s to connect, no FUA, structured replies, 64 MiB. */
    public static final NbdOptions DEFAULTS = new NbdOptions(Duration.ofSeconds(30), Duration.ofSeconds(60),
            Duration.ofSeconds(10), false, true, 64L << 20);

    /**
     * Checks the values.
     *
     * @throws IllegalArgumentException if a duration is negative (or {@code replyTimeout} or
     *     {@code connectTimeout} zero), or {@code replayLimitBytes} is below 1 MiB
     */
    public NbdOptions {
        Objects.requireNonNull(reconnectWindow, "reconnectWindow");
        Objects.requireNonNull(replyTimeout, "replyTimeout");
        Objects.requireNonNull(connectTimeout, "connectTimeout");
        if (reconnectWindow.isNegative()) {
            throw new IllegalArgumentException("reconnect window " + reconnectWindow + " is negative");
        }
        if (replyTimeout.isNegative() || replyTimeout.isZero()) {
            throw new IllegalArgumentException("reply timeout " + replyTimeout + " is not positive");
        }
        if (connectTimeout.isNegative() || connectTimeout.isZero()) {
            throw new IllegalArgumentException("connect timeout " + connectTimeout + " is not positive");
        }
        if (replayLimitBytes < (1 << 20)) {
            throw new IllegalArgumentException("replay limit " + replayLimitBytes + " bytes is below 1 MiB");
        }
    }

    /**
     * @param value see {@link #reconnectWindow}
     * @return a copy with it
     */
    public NbdOptions withReconnectWindow(Duration value) {
        return new NbdOptions(value, replyTimeout, connectTimeout, forceUnitAccess, structuredReplies,
                replayLimitBytes);
    }

    /**
     * @param value see {@link #replyTimeout}
     * @return a copy with it
     */
    public NbdOptions withReplyTimeout(Duration value) {
        return new NbdOptions(reconnectWindow, value, connectTimeout, forceUnitAccess, structuredReplies,
                replayLimitBytes);
    }

    /**
     * @param value see {@link #connectTimeout}
     * @return a copy with it
     */
    public NbdOptions withConnectTimeout(Duration value) {
        return new NbdOptions(reconnectWindow, replyTimeout, value, forceUnitAccess, structuredReplies,
                replayLimitBytes);
    }

    /**
     * @param value see {@link #forceUnitAccess}
     * @return a copy with it
     */
    public NbdOptions withForceUnitAccess(boolean value) {
        return new NbdOptions(reconnectWindow, replyTimeout, connectTimeout, value, structuredReplies,
                replayLimitBytes);
    }

    /**
     * @param value see {@link #structuredReplies}
     * @return a copy with it
     */
    public NbdOptions withStructuredReplies(boolean value) {
        return new NbdOptions(reconnectWindow, replyTimeout, connectTimeout, forceUnitAccess, value,
                replayLimitBytes);
    }

    /**
     * @param value see {@link #replayLimitBytes}
     * @return a copy with it
     */
    public NbdOptions withReplayLimitBytes(long value) {
        return new NbdOptions(reconnectWindow, replyTimeout, connectTimeout, forceUnitAccess, structuredReplies,
                value);
    }
}

package dev.iomap.fuse;

/**
 * How every FUSE operation of this module runs its body: an answer (0, a byte count or an offset), or
 * the negated errno of whatever it threw ({@link ErrnoMapping}). No exception ever leaves, since it
 * would unwind into libfuse's native frames and bring the JVM down. EIO and EUCLEAN are logged, as
 * unexpected failures: one warning per failed call, whose message names the operation, the path, the
 * errno and the first line of what the filesystem said (what is damaged, and where), with the exception
 * attached for a handler that shows stacks (the command line's, with {@code --debug}).
 */
final class Calls {
    private static final System.Logger LOG = System.getLogger(FuseBridge.class.getName());

    private Calls() {
    }

    /** An operation's body: its answer, or an exception that {@link #call} turns into a negated errno. */
    @FunctionalInterface
    interface Body {
        /**
         * @return the operation's answer, or a negated errno it chose itself
         * @throws Exception whatever failed, mapped by {@link ErrnoMapping}
         */
        long run() throws Exception;
    }

    /**
     * @param op the operation's name, for the log
     * @param path its path, for the log
     * @param body what it does
     * @return the body's answer, or the negated errno of what it threw
     */
    static int call(String op, String path, Body body) {
        return Math.toIntExact(callForLong(op, path, body));
    }

    /**
     * As {@link #call}, for an operation whose answer is an offset or a byte count ({@code off_t},
     * {@code ssize_t}).
     *
     * @param op the operation's name, for the log
     * @param path its path, for the log
     * @param body what it does
     * @return the body's answer, or the negated errno of what it threw
     */
    static long callForLong(String op, String path, Body body) {
        try {
            return body.run();
        } catch (Throwable t) {
            return -errno(op, path, t);
        }
    }

    /**
     * The errno of a failed operation ({@link ErrnoMapping}); EIO and EUCLEAN are logged, as unexpected
     * failures: one line naming the operation, what it acted on and the failure's own first line (the
     * stack goes with the record; the command line's log handler prints it only with {@code --debug}).
     *
     * @param op the operation's name, for the log
     * @param what what it acted on (a path, a node id), for the log
     * @param failure what it threw
     * @return the positive errno to answer
     */
    static int errno(String op, Object what, Throwable failure) {
        int errno = ErrnoMapping.errno(failure);
        if (errno == LinuxErrno.EIO || errno == LinuxErrno.EUCLEAN) {
            LOG.log(System.Logger.Level.WARNING, op + " " + what + " failed: " + LinuxErrno.name(errno) + ": "
                    + firstLine(failure), failure);
        }
        return errno;
    }

    /** @return the first line of the innermost message of {@code t} worth showing, or its class name if none */
    private static String firstLine(Throwable t) {
        Throwable shown = t;
        while (shown.getMessage() == null && shown.getCause() != null && shown.getCause() != shown) {
            shown = shown.getCause();
        }
        String message = shown.getMessage();
        if (message == null || message.isBlank()) {
            return shown.getClass().getSimpleName();
        }
        return message.strip().lines().findFirst().orElse(message);
    }
}

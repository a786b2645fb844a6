package dev.iomap.devices.nbd;

/**
 * What one successful handshake agreed: the export's size, its transmission flags, its block size
 * constraints ({@code NBD_INFO_BLOCK_SIZE}, or the protocol's defaults) and whether replies are
 * structured.
 *
 * @param exportSize bytes in the export
 * @param transmissionFlags the {@code NBD_FLAG_*} transmission flags
 * @param minimumBlockSize the smallest unit the server accepts, a power of two (1 if it gave none)
 * @param preferredBlockSize the unit the server works best with (4096 if it gave none)
 * @param maximumPayload the largest read or write this client sends: the server's maximum, at most
 *     {@value NbdProtocol#DEFAULT_MAX_PAYLOAD} bytes
 * @param structuredReplies whether the server agreed to structured replies
 */
record NbdSession(long exportSize, int transmissionFlags, int minimumBlockSize, int preferredBlockSize,
        int maximumPayload, boolean structuredReplies) {

    /** @return whether the export is read-only ({@code NBD_FLAG_READ_ONLY}) */
    boolean readOnly() {
        return has(NbdProtocol.NBD_FLAG_READ_ONLY);
    }

    /** @return whether the server takes {@code NBD_CMD_FLUSH} */
    boolean canFlush() {
        return has(NbdProtocol.NBD_FLAG_SEND_FLUSH);
    }

    /** @return whether the server takes {@code NBD_CMD_FLAG_FUA} */
    boolean canForceUnitAccess() {
        return has(NbdProtocol.NBD_FLAG_SEND_FUA);
    }

    /** @return whether the server takes {@code NBD_CMD_TRIM} */
    boolean canTrim() {
        return has(NbdProtocol.NBD_FLAG_SEND_TRIM);
    }

    /** @return whether the server takes {@code NBD_CMD_WRITE_ZEROES} */
    boolean canWriteZeroes() {
        return has(NbdProtocol.NBD_FLAG_SEND_WRITE_ZEROES);
    }

    private boolean has(int flag) {
        return (transmissionFlags & flag) != 0;
    }
}

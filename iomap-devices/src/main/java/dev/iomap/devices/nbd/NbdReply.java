package dev.iomap.devices.nbd;

/**
 * The server's answer to one request: success ({@code error == 0}, with a read's data), or the
 * errno it returned and its message, if a structured reply gave one.
 *
 * @param error 0, or the NBD error value
 * @param message the server's text for the error, or null
 * @param data a read's bytes, exactly its length; null for other commands and for errors
 */
record NbdReply(int error, String message, byte[] data) {
}

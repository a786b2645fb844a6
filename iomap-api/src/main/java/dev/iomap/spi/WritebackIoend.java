package dev.iomap.spi;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A built ioend as {@link WritebackOps#writebackSubmit} receives it: the kernel's
 * {@code struct iomap_ioend} in {@code wpc->wb_ctx} at {@code ->writeback_submit}. Implemented by the
 * core only.
 *
 * <p>Its folios are under writeback and no longer dirty, so its bytes do not change until the
 * ioend completes: writers and mapped stores wait for writeback to end before they change a folio.
 */
public interface WritebackIoend {

    /**
     * The ioend as one mapping: {@code offset} its first byte (block aligned), {@code length} its bytes
     * (whole blocks; the block straddling EOF was zeroed past EOF), {@code address} the device byte
     * address of {@code offset}, type and flags those of every mapping added to it, and the validity
     * cookie of the mapping of its first byte.
     *
     * @return the ioend's file range, device address, type and flags
     */
    Iomap range();

    /**
     * Read-only views of exactly the bytes to be written, in file order, together
     * {@code range().length()} bytes, each positioned at 0; new views at each call. They stay valid
     * until the ioend completes (the future of {@link WritebackOps#writebackSubmit}), not after:
     * folio memory is reused once a folio leaves the cache, so an adapter copies what it keeps.
     *
     * @return the bytes
     */
    List<ByteBuffer> data();

    /**
     * Writes {@link #data()} at {@code range().address()} on the filesystem's device, as file data: the
     * kernel's {@code iomap_ioend_writeback_submit}, what {@link WritebackOps#writebackSubmit} does
     * unless an adapter writes the ioend itself. Call it at most once.
     *
     * @return the device write's future
     */
    CompletableFuture<Void> submit();
}

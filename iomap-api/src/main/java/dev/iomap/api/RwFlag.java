package dev.iomap.api;

/**
 * Flags of one read or write call: the {@code RWF_*} flags of {@code preadv2(2)} and
 * {@code pwritev2(2)} (the kernel's {@code rwf_t}), given to {@link IomapFile#read(long,
 * java.nio.ByteBuffer, java.util.Set)} and {@link IomapFile#write(long, java.nio.ByteBuffer,
 * java.util.Set)}. Unlike an {@link OpenFlag}, a flag holds for that call only.
 */
public enum RwFlag {
    /**
     * Uncached buffered I/O ({@code RWF_DONTCACHE}, Linux 6.14; fio's {@code uncached=1}): the call goes
     * through the page cache as any buffered read or write does, but the folios it brings into the
     * cache do not stay there. A read drops each folio it created once it has copied from it, and
     * reads no further ahead than it copies; a write starts the writeback of its range before it
     * returns, without waiting for it, and each folio it created leaves the cache when its writeback
     * ends (unless it was dirtied again meanwhile: then its next writeback drops it). Folios that were
     * cached before the call stay cached, and a later cached read or write of a folio keeps it.
     * Reads and writes see the same bytes as without the flag; durability is as for any buffered
     * write (only {@code fsync} promises it).
     *
     * <p>On a {@link OpenFlag#DIRECT} open the flag changes nothing: direct I/O caches nothing.
     */
    DONTCACHE
}

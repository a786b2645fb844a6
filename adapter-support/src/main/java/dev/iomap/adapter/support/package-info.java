/**
 * Building blocks every filesystem adapter shares: checksums ({@link dev.iomap.adapter.support.Crc32c}),
 * little-endian field codecs ({@link dev.iomap.adapter.support.BlockWriter},
 * {@link dev.iomap.adapter.support.BlockReader}), the superblock record
 * ({@link dev.iomap.adapter.support.SuperblockCodec}), self-describing checksummed metadata blocks
 * ({@link dev.iomap.adapter.support.MetadataBlock}), a metadata write-ahead log
 * ({@link dev.iomap.adapter.support.Journal}), per-file extent maps
 * ({@link dev.iomap.adapter.support.ExtentMap}) and a free-space allocator
 * ({@link dev.iomap.adapter.support.FreeSpaceAllocator}). Subpackages: {@code lock} (the embedded glock
 * manager) and {@code ns} (adapter-neutral namespace pieces: directory blocks, extended attributes,
 * block chains, new-inode ownership rules).
 *
 * <p>Conventions shared by every class here:
 * <ul>
 *   <li>A <em>block</em> is a block of the {@link dev.iomap.device.BlockDevice} ({@code blockSize()}
 *       bytes); block {@code n} starts at device byte {@code n * blockSize()}. Block numbers, file
 *       block offsets and lengths are {@code long}, and all arithmetic on them is 64-bit.</li>
 *   <li>Everything on the device is little-endian.</li>
 *   <li>Damaged or foreign on-device data is a {@link dev.iomap.api.CorruptFileSystemException} whose
 *       message names the structure and where it is (block number and device byte offset); a full
 *       allocator or journal is a {@link dev.iomap.api.NoSpaceException}; a bad argument is an
 *       {@link dev.iomap.api.InvalidRangeException}. Device failures pass through unchanged.</li>
 *   <li>Nothing here flushes the device unless its javadoc says so.</li>
 * </ul>
 */
package dev.iomap.adapter.support;

/**
 * Adapter-neutral namespace pieces for block-based adapters: the entries of a directory packed into
 * directory blocks ({@link dev.iomap.adapter.support.ns.DirectoryBlocks}), the one-byte codes of file
 * types ({@link dev.iomap.adapter.support.ns.FileTypeCodes}), an inode's extended attributes and their
 * encoding ({@link dev.iomap.adapter.support.ns.XattrSet}), chains of metadata blocks holding an inode's
 * byte string ({@link dev.iomap.adapter.support.ns.ChainBlocks}) and the POSIX rules of who owns a new
 * inode ({@link dev.iomap.adapter.support.ns.PosixRules}).
 *
 * <p>None of these flushes or journals anything: an adapter decides where each encoded payload goes
 * (which metadata block, which transaction). None is thread-safe unless its javadoc says so; adapters
 * use them under their metadata lock. Encodings are little-endian, as everywhere in adapter-support;
 * names are byte strings ({@link dev.iomap.api.FileNames}).
 */
package dev.iomap.adapter.support.ns;

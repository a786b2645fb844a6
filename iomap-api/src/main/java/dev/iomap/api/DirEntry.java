package dev.iomap.api;

/**
 * One name in a directory.
 *
 * @param name the name, without slashes, never "." or ".."
 * @param ino the inode it points at
 * @param type what the inode is
 */
public record DirEntry(String name, long ino, FileType type) {
}

/**
 * The {@code iomap} command: {@code bench} runs fio job files against an adapter and reports write
 * amplification with fio's output; {@code mkfs}, {@code fsck} and {@code stat} work on image files.
 * Entry point: {@link dev.iomap.cli.IomapCli}.
 */
package dev.iomap.cli;

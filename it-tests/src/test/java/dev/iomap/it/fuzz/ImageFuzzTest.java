package dev.iomap.it.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 12's image fuzzer: damaged images of every adapter are refused with one line, or mount and
 * read back the data they held, and a write workload on them never damages another file.
 *
 * <p><b>Images.</b> Each adapter is formatted on several geometries ({@link ImageFuzzer#targets}; for
 * bcachefs-like: crc32c, checksum=none with 8 KiB extents, zstd with xxhash64, and a crash image),
 * populated deterministically (files of many sizes, directories, a sparse, a fallocated, a
 * fragmented and a reflinked file where the adapter has them; a file per zone of each type on
 * zonefs-like), unmounted, and read back: every path and every byte is recorded. One xfs-like image,
 * one gfs2-like image (whose last transaction revokes journaled-data blocks: {@link Gfs2LikeTarget})
 * and one bcachefs-like image (whose last transaction, an overwrite, follows a checkpoint: {@link BcachefsLikeTarget})
 * are crash images instead, taken mounted after a sync, so that their mutants damage live journal
 * transactions; a crash image's "original" is what a mount reads after replaying them, and fsck's
 * report that it was not cleanly unmounted counts as nothing found.
 *
 * <p><b>Mutants.</b> From the seed ({@code -Diomap.fuzz.seed}, default 0), {@code -Diomap.fuzz.mutants}
 * mutants (default 6) of each {@link MutationKind} per image: bit flips anywhere and inside metadata,
 * forged fields (a documented field of a structure set to 0, 1, −1, a block count, another used
 * block's number, a value near the device's end... and the structure's CRC32C recomputed with
 * adapter-support's framing, so that only structural checks can catch it), zeroed blocks, and blocks
 * copied over one of the same or of another type.
 *
 * <p><b>Outcomes.</b> Each mutant is first checked by fsck (on a copy), then mounted:
 * <ul>
 *   <li>{@link Outcome#REFUSED_AT_MOUNT}: mount (or opening the zoned device) refused it with a
 *       one-line typed error, and fsck reported a problem or refused too;</li>
 *   <li>{@link Outcome#REFUSED_BY_FSCK}: fsck reported it (each problem one line), mount accepted it
 *       and every file read back exactly;</li>
 *   <li>{@link Outcome#SAME_DATA}: fsck found nothing and every file read back exactly;</li>
 *   <li>{@link Outcome#DATA_CHANGED_IN_FLIPPED_FILE_ONLY}: only the content of a file owning a damaged
 *       data block differs, and only inside that block (for a checksummed or compressed extent of
 *       bcachefs-like, inside that extent);</li>
 *   <li>{@link Outcome#CHECKSUM_FAILED_IN_FLIPPED_FILE_ONLY}: an adapter that checksums data
 *       (bcachefs-like) fails the read of a file owning a damaged data block with a one-line typed
 *       error, and every other file reads back exactly;</li>
 *   <li>{@link Outcome#CHANGED_IN_FORGED_FILE_ONLY}: a forged field of one regular file's own
 *       metadata that every structural rule still allows (its size, an extent's file offset or
 *       unwritten flag, a valid name byte, its zone's write pointer or condition) changes that file
 *       alone;</li>
 *   <li>anything else is a {@link Outcome#VIOLATION}: an error that is not an {@link IOException}
 *       (IllegalStateException, an index out of bounds, a NullPointerException...), one without a
 *       message or with more than one line, no verdict within the time limit (a hang), a path missing,
 *       added or changed in type or size, content differing outside the damaged block's owners and
 *       range, a mount refusing what fsck passes (reports nothing at all about), and for an adapter
 *       whose mount runs fsck's checks (bcachefs-like), a mount accepting what fsck flags.</li>
 * </ul>
 *
 * <p><b>Workload.</b> Every mutant that mounts then runs a small write workload (append, overwrite,
 * truncate, unlink, mkdir, create, fsync, sync; on zonefs-like an overwrite, appends and a zone
 * reset) that either completes or stops at the first step failing with a one-line typed error (a
 * shutdown is fine), and is unmounted. Then:
 * <ul>
 *   <li>an unmount that failed must not leave the image marked clean (xfs-like's superblock flag);</li>
 *   <li>the image is remounted: an image whose unmount succeeded must mount; one left by a failed
 *       unmount may be refused, but then fsck must report a problem;</li>
 *   <li>after the remount every path the workload does not touch holds its original content (up to the
 *       damaged block, as above); if the workload completed, the paths it touched hold what its model
 *       says, and none is missing or added;</li>
 *   <li><em>no new damage</em>: the remount unmounts (unless the first unmount failed too), and if fsck
 *       found nothing on the mutant before it was mounted, fsck finds nothing after the workload and
 *       the remount. A mutant fsck already flagged may still be flagged: its damaged structure is not
 *       necessarily rewritten by the workload. The files' contents are the check that the damage did
 *       not spread.</li>
 * </ul>
 *
 * <p>Each adapter is a test of its own ({@code [gfs2-like]}...; {@code -Diomap.fuzz.target} skips the
 * adapters it selects no target of, saying so). The test prints the outcome counts per adapter and
 * mutation kind and fails on any violation,
 * naming for each the system properties that rerun that mutant alone (seed, target, kind, index), the
 * block, image offset and field damaged, and the rule broken. A long run:
 * {@code -Diomap.fuzz.mutants=500 -Diomap.fuzz.seed=N}.
 */
class ImageFuzzTest {

    /** @return every fuzzed adapter: each is a test of its own, so that one adapter's violations do not hide another's */
    static List<String> adapters() {
        return ImageFuzzer.adapters();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("adapters")
    void everyMutantIsRefusedOrReadsBackItsDataAndTheWorkloadDamagesNoOtherFile(String adapter)
            throws IOException, InterruptedException {
        ImageFuzzer fuzzer = new ImageFuzzer(Long.getLong("iomap.fuzz.seed", 0),
                Integer.getInteger("iomap.fuzz.mutants", 6),
                System.getProperty("iomap.fuzz.target", ""),
                System.getProperty("iomap.fuzz.kind", "").isEmpty() ? null
                        : MutationKind.valueOf(System.getProperty("iomap.fuzz.kind")),
                Integer.getInteger("iomap.fuzz.mutant", -1),
                Long.getLong("iomap.fuzz.timeoutSeconds", 30), Boolean.getBoolean("iomap.fuzz.verbose"));
        assumeTrue(fuzzer.selects(adapter), () -> "-Diomap.fuzz.target=" + fuzzer.targetFilter()
                + " selects no target of " + adapter);
        long start = System.nanoTime();
        ImageFuzzer.Result result = fuzzer.run(adapter);
        System.out.printf("image fuzz %s: seed %d, %d mutants in %.1f s%n%s", adapter, fuzzer.seed(), result.mutants(),
                (System.nanoTime() - start) / 1e9, result.table().render());
        result.failures().forEach(failure -> System.out.println("VIOLATION " + failure));
        assertThat(result.mutants()).isPositive();
        assertThat(result.failures()).isEmpty();
    }
}

package dev.iomap.cli.bench;

import java.util.SplittableRandom;

/**
 * The block offsets one thread visits in one file for one direction. Not thread-safe: each thread
 * owns its sequences.
 */
sealed interface OffsetSequence {

    /** @return the byte offset of the next I/O */
    long next();

    /**
     * @param fileSize bytes of the file
     * @param blockSize bytes per I/O
     * @param random whether to visit blocks in random order
     * @param rng where the random order's keys come from
     * @return a sequence over the whole blocks of the file, starting again after the last
     */
    static OffsetSequence of(long fileSize, int blockSize, boolean random, SplittableRandom rng) {
        long blocks = fileSize / blockSize;
        return random ? new RandomOrder(blocks, blockSize, rng) : new Sequential(blocks, blockSize);
    }

    /** Block 0, 1, 2, … and again. */
    final class Sequential implements OffsetSequence {
        private final long blocks;
        private final int blockSize;
        private long block;

        Sequential(long blocks, int blockSize) {
            this.blocks = blocks;
            this.blockSize = blockSize;
        }

        @Override
        public long next() {
            long offset = block * blockSize;
            block = block + 1 == blocks ? 0 : block + 1;
            return offset;
        }
    }

    /**
     * Every block once per round in a random order, like fio's random map, in constant memory: a
     * keyed bijection on the smallest power of two holding the block count, walked until it lands
     * inside the file ("cycle walking"), fresh keys each round.
     */
    final class RandomOrder implements OffsetSequence {
        private final long blocks;
        private final int blockSize;
        private final long mask;
        private final int shift;
        private final SplittableRandom rng;
        private long multiplier;
        private long addend;
        private long counter;

        RandomOrder(long blocks, int blockSize, SplittableRandom rng) {
            this.blocks = blocks;
            this.blockSize = blockSize;
            int bits = 64 - Long.numberOfLeadingZeros(Math.max(blocks - 1, 0));
            this.mask = bits == 0 ? 0 : -1L >>> (64 - bits);
            this.shift = bits / 2 + 1;
            this.rng = rng;
            rekey();
        }

        private void rekey() {
            multiplier = rng.nextLong() | 1;
            addend = rng.nextLong();
        }

        @Override
        public long next() {
            if (counter == blocks) {
                counter = 0;
                rekey();
            }
            long block = counter++;
            do {
                block = permute(block);
            } while (block >= blocks);
            return block * blockSize;
        }

        /** A bijection on {@code [0, mask]}: odd multiplies, an add and xor-shifts, all mod 2^bits. */
        private long permute(long value) {
            long x = (value * multiplier) & mask;
            x ^= x >>> shift;
            x = (x + addend) & mask;
            x = (x * multiplier) & mask;
            x ^= x >>> shift;
            return x;
        }
    }
}

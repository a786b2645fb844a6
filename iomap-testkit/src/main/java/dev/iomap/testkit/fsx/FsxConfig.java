package dev.iomap.testkit.fsx;

import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.Geometry;
import java.nio.file.Path;

/**
 * How a model-checker run goes.
 *
 * @param seed the random seed (the run is a function of it)
 * @param ops operations to run
 * @param fullCheckEvery operations between comparisons of the whole file
 * @param maxFileSize no operation reaches past this offset
 * @param maxOpLength the longest read, write or range operation
 * @param logDir where a failing run writes its op log
 * @param file the file the run drives and its rules ({@link FsxFile#created} {@code /fsx} by default)
 */
public record FsxConfig(long seed, int ops, int fullCheckEvery, long maxFileSize, int maxOpLength, Path logDir,
        FsxFile file) {

    /** Validates. */
    public FsxConfig {
        java.util.Objects.requireNonNull(file, "file");
        if (ops < 0 || fullCheckEvery <= 0 || maxFileSize <= 0 || maxOpLength <= 0) {
            throw new IllegalArgumentException("bad fsx config: ops=" + ops + " fullCheckEvery=" + fullCheckEvery
                    + " maxFileSize=" + maxFileSize + " maxOpLength=" + maxOpLength);
        }
    }

    /**
     * The fixture's settings: op count, check interval and log directory from the system properties,
     * a seed mixed from the base seed and the fixture's label, and a file size that spans several of
     * the geometry's largest folios (1 MiB to 8 MiB).
     *
     * @param fixture the adapter under test
     * @return the configuration
     */
    public static FsxConfig of(AdapterFixture fixture) {
        var settings = fixture.settings();
        Geometry geometry = fixture.geometry();
        long maxFileSize = Math.clamp(2 * geometry.maxFolioSize(), 1L << 20, 8L << 20);
        return new FsxConfig(settings.seedFor(fixture.label() + "/fsx"), settings.fsxOps(),
                settings.fullCheckEvery(), maxFileSize, 256 << 10, settings.logDir(), FsxFile.created("/fsx"));
    }

    /**
     * @param value the seed
     * @return a copy with that seed
     */
    public FsxConfig withSeed(long value) {
        return new FsxConfig(value, ops, fullCheckEvery, maxFileSize, maxOpLength, logDir, file);
    }

    /**
     * @param value the file to drive and its rules
     * @return a copy driving that file
     */
    public FsxConfig withFile(FsxFile value) {
        return new FsxConfig(seed, ops, fullCheckEvery, maxFileSize, maxOpLength, logDir, value);
    }

    /**
     * @param value operations to run
     * @return a copy running that many
     */
    public FsxConfig withOps(int value) {
        return new FsxConfig(seed, value, fullCheckEvery, maxFileSize, maxOpLength, logDir, file);
    }
}

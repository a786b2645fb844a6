package dev.iomap.it.fuzz;

import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Predicate;

/**
 * A small deterministic write workload run on every mutant that mounts, with a model of what each
 * step does to the files. The steps run in order until one fails; only the paths {@link #touches}
 * names change.
 *
 * @param steps the steps
 * @param touches the paths the steps may change (created, written, truncated, deleted)
 */
record Workload(List<Step> steps, Predicate<String> touches) {

    Workload {
        steps = List.copyOf(steps);
    }

    /** One operation on the filesystem. */
    @FunctionalInterface
    interface Action {
        void run(IomapFileSystem fs) throws IOException;
    }

    /** What a step does to the model: path to node. */
    @FunctionalInterface
    interface Effect {
        void apply(Map<String, FileTree.Node> files);
    }

    /**
     * @param name what the step does, for messages
     * @param action the operation
     * @param effect its effect on the model
     */
    record Step(String name, Action action, Effect effect) {
    }

    /**
     * @param original the files before the workload
     * @return the files after every step completed
     */
    FileTree expected(FileTree original) {
        Map<String, FileTree.Node> files = new TreeMap<>(original.nodes());
        for (Step step : steps) {
            step.effect().apply(files);
        }
        return FileTree.of(files);
    }

    // Building blocks of steps.

    static Step write(String path, long offset, long seed, int length) {
        return new Step("write " + length + " bytes at " + offset + " of " + path, fs -> {
            try (IomapFile file = fs.open(path)) {
                file.write(offset, TestData.buffer(seed, offset, length));
            }
        }, files -> files.put(path, files.get(path).withContent(written(files.get(path).content(), offset,
                TestData.pattern(seed, offset, length)))));
    }

    static Step create(String path, long seed, int length) {
        return new Step("create " + path + " with " + length + " bytes", fs -> {
            try (IomapFile file = fs.create(path)) {
                file.write(0, TestData.buffer(seed, 0, length));
                file.fsync();
            }
        }, files -> files.put(path, FileTree.Node.file(-1, TestData.pattern(seed, 0, length))));
    }

    static Step truncate(String path, long size) {
        return new Step("truncate " + path + " to " + size, fs -> {
            try (IomapFile file = fs.open(path)) {
                file.truncate(size);
            }
        }, files -> files.put(path, files.get(path).withContent(Arrays.copyOf(files.get(path).content(), (int) size))));
    }

    static Step unlink(String path) {
        return new Step("unlink " + path, fs -> fs.unlink(path), files -> files.remove(path));
    }

    static Step mkdir(String path) {
        return new Step("mkdir " + path, fs -> fs.mkdir(path), files -> files.put(path, FileTree.Node.directory(-1)));
    }

    static Step fsync(String path) {
        return new Step("fsync " + path, fs -> {
            try (IomapFile file = fs.open(path)) {
                file.fsync();
            }
        }, files -> {
        });
    }

    static Step sync() {
        return new Step("sync", IomapFileSystem::sync, files -> {
        });
    }

    private static byte[] written(byte[] content, long offset, byte[] data) {
        byte[] result = Arrays.copyOf(content, (int) Math.max(content.length, offset + data.length));
        System.arraycopy(data, 0, result, (int) offset, data.length);
        return result;
    }
}

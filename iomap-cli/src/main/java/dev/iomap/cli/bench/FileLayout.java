package dev.iomap.cli.bench;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.cli.jobfile.Fallocate;
import dev.iomap.cli.jobfile.JobSpec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.function.Consumer;

/**
 * fio's file setup before a group runs: create each missing file (and its directories), preallocate
 * it as {@code fallocate=} says if the adapter can, set its size, write it fully if the job reads or
 * has {@code overwrite=1} (in the job's write block size, as fio), fsync it ({@code create_fsync}),
 * then drop the clean cache ({@code invalidate}) and read the files of {@code pre_read} jobs back
 * in. Not thread-safe; the runner calls it before starting the group's threads.
 */
final class FileLayout {
    private final IomapFileSystem fs;
    private final Consumer<String> notices;
    private final Set<String> created = new HashSet<>();
    private final boolean zoned;

    /**
     * @param fs the mounted filesystem
     * @param notices where "Laying out IO file" lines go
     * @param zoned whether the filesystem is on a zoned device: its files are not sized by truncate
     *     (a sequential zone file's size is its write pointer, which only appends move; a truncate
     *     to the capacity would finish the zone), only written when the job reads or overwrites
     */
    FileLayout(IomapFileSystem fs, Consumer<String> notices, boolean zoned) {
        this.fs = fs;
        this.notices = notices;
        this.zoned = zoned;
    }

    /**
     * @param jobs the group's jobs
     * @throws IOException if a file cannot be created or written
     */
    void prepare(List<JobSpec> jobs) throws IOException {
        for (JobSpec job : jobs) {
            for (int thread = 0; thread < job.numjobs(); thread++) {
                layOutThreadFiles(job, thread);
            }
        }
        if (jobs.stream().anyMatch(job -> job.files().invalidate())) {
            fs.dropCleanCache();
        }
        Set<String> preRead = new HashSet<>();
        for (JobSpec job : jobs) {
            if (!job.files().preRead()) {
                continue;
            }
            for (int thread = 0; thread < job.numjobs(); thread++) {
                for (String path : job.files().paths(job.name(), thread)) {
                    if (preRead.add(path)) {
                        readFully(path, job.io().readBlockSize());
                    }
                }
            }
        }
    }

    private void layOutThreadFiles(JobSpec job, int thread) throws IOException {
        List<String> missing = job.files().paths(job.name(), thread).stream()
                .filter(created::add)
                .toList();
        List<String> toCreate = new ArrayList<>();
        for (String path : missing) {
            if (!exists(path, job.files().fileSize())) {
                toCreate.add(path);
            }
        }
        if (toCreate.isEmpty()) {
            return;
        }
        long bytes = toCreate.size() * job.files().fileSize();
        notices.accept(job.name() + ": Laying out IO file (" + toCreate.size() + " file"
                + (toCreate.size() == 1 ? "" : "s") + " / " + (bytes >> 20) + "MiB)");
        for (String path : toCreate) {
            layOut(job, path);
        }
    }

    private boolean exists(String path, long size) throws IOException {
        try {
            return fs.stat(path).size() >= size;
        } catch (NoSuchFileException e) {
            return false;
        }
    }

    private void layOut(JobSpec job, String path) throws IOException {
        makeParents(path);
        long size = job.files().fileSize();
        try (IomapFile file = openOrCreate(path)) {
            preallocate(file, job.files().fallocate(), size);
            if (!zoned && fs.capabilities().contains(Capability.TRUNCATE) && file.size() < size) {
                file.truncate(size);
            }
            if (job.io().rw().reads() || job.files().overwrite()) {
                writeFully(file, size, job.io().writeBlockSize(), job.io().randomSeed());
            }
            if (job.files().createFsync()) {
                file.fsync();
            }
        }
    }

    private IomapFile openOrCreate(String path) throws IOException {
        try {
            return fs.open(path);
        } catch (NoSuchFileException e) {
            return fs.create(path);
        }
    }

    private void preallocate(IomapFile file, Fallocate mode, long size) throws IOException {
        boolean keepSize = mode == Fallocate.KEEP;
        boolean allocate = mode == Fallocate.NATIVE || mode == Fallocate.POSIX || keepSize;
        if (!allocate || !fs.capabilities().contains(Capability.FALLOCATE)) {
            return;
        }
        try {
            file.fallocate(FallocateMode.ALLOCATE, 0, size, keepSize);
        } catch (NotSupportedException e) {
            // fio's native mode falls back to no preallocation when the call is not implemented
        }
    }

    private static void writeFully(IomapFile file, long size, int blockSize, long seed) throws IOException {
        ByteBuffer buffer = Filler.buffer(blockSize, new SplittableRandom(seed));
        for (long pos = 0; pos < size; pos += blockSize) {
            buffer.clear().limit((int) Math.min(blockSize, size - pos));
            file.write(pos, buffer);
        }
    }

    private void readFully(String path, int blockSize) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocateDirect(blockSize);
        try (IomapFile file = fs.open(path)) {
            long size = file.size();
            for (long pos = 0; pos < size; pos += blockSize) {
                buffer.clear();
                file.read(pos, buffer);
            }
        }
    }

    private void makeParents(String path) throws IOException {
        int slash = 0;
        while ((slash = path.indexOf('/', slash + 1)) > 0) {
            String directory = path.substring(0, slash);
            try {
                fs.stat(directory);
            } catch (NoSuchFileException e) {
                fs.mkdir(directory);
            }
        }
    }
}

package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands with their default adapter, xfs-like, as a user runs them: a tiny bench on an image
 * file, which fsck then finds clean and stat mounts.
 */
class DefaultAdapterTest {

    @TempDir
    Path dir;

    @Test
    @SuppressWarnings("unchecked")
    void benchOnAnImageThenFsckAndStat() throws IOException {
        Path job = Files.writeString(dir.resolve("tiny.fio"),
                "[tiny]\nrw=randwrite\nbs=4k\nsize=256k\nfdatasync=1\n");
        Path image = dir.resolve("xfs.img");

        Cli bench = Cli.run("bench", "--progress=never", "--output-format=json", "--device=file:" + image,
                job.toString());

        assertThat(bench.status()).as(bench.err()).isZero();
        Map<String, Object> root = (Map<String, Object>) MiniJson.parse(bench.out());
        assertThat(MiniJson.object(root, "iomap")).containsEntry("adapter", "xfs-like");
        Map<String, Object> first = (Map<String, Object>) ((List<Object>) root.get("jobs")).getFirst();
        assertThat(MiniJson.object(first, "write")).containsEntry("total_ios", 64L);
        Map<String, Object> iomap = MiniJson.object(first, "iomap");
        assertThat(iomap).containsEntry("app_bytes_written", 262144L);
        assertThat((Long) iomap.get("device_data_bytes_written")).isGreaterThanOrEqualTo(262144L);
        assertThat((Double) iomap.get("write_amplification")).isGreaterThanOrEqualTo(1.0);

        Cli fsck = Cli.run("fsck", image.toString());
        assertThat(fsck.status()).as(fsck.out() + fsck.err()).isZero();
        assertThat(fsck.out()).startsWith(image + ": clean (xfs-like, 4096-byte blocks; checked ");

        Cli stat = Cli.run("stat", image.toString());
        assertThat(stat.status()).as(stat.err()).isZero();
        assertThat(stat.out()).contains("adapter      : xfs-like").contains("root         : 1 entries");
    }
}

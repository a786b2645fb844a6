package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The JSON output parses and has fio's structure, with the right types where tools read it. */
class JsonReportShapeTest {

    @TempDir
    Path dir;

    @Test
    @SuppressWarnings("unchecked")
    void theJsonHasFiosStructureAndTheIomapObject() throws IOException {
        Path job = Files.writeString(dir.resolve("shape.fio"), String.join("\n",
                "[global]", "rw=randwrite", "bs=4k", "size=128k", "fsync=2", "description=a \"quoted\" job",
                "[shape]", "numjobs=2", "group_reporting=1", ""));

        Cli cli = Cli.run("bench", "--adapter=snapfs", "--progress=never", "--output-format=json", job.toString());

        assertThat(cli.status()).as(cli.err()).isZero();
        Map<String, Object> root = (Map<String, Object>) MiniJson.parse(cli.out());
        assertThat(root.get("fio version")).isInstanceOf(String.class);
        assertThat(root.get("timestamp")).isInstanceOf(Long.class);
        assertThat(MiniJson.object(root, "global options")).containsEntry("description", "a \"quoted\" job");
        assertThat(MiniJson.object(root, "iomap")).containsEntry("adapter", "snapfs").containsEntry("block_size", 4096L);
        assertThat(MiniJson.object(MiniJson.object(root, "iomap"), "page_cache"))
                .containsEntry("pageSize", 4096L).containsEntry("perBlockDirty", true);

        List<Object> jobs = (List<Object>) root.get("jobs");
        assertThat(jobs).hasSize(1);
        Map<String, Object> first = (Map<String, Object>) jobs.getFirst();
        assertThat(first).containsEntry("jobname", "shape").containsEntry("groupid", 0L).containsEntry("error", 0L);
        assertThat(MiniJson.object(first, "job options")).containsEntry("numjobs", "2");

        Map<String, Object> write = MiniJson.object(first, "write");
        assertThat(write.get("bw_bytes")).isInstanceOf(Long.class);
        assertThat(write.get("bw")).isInstanceOf(Long.class);
        assertThat(write.get("iops")).isInstanceOf(Double.class);
        assertThat(write.get("runtime")).isInstanceOf(Long.class);
        assertThat(write).containsEntry("total_ios", 64L);
        Map<String, Object> clat = MiniJson.object(write, "clat_ns");
        assertThat(clat).containsEntry("N", 64L).containsKeys("min", "max", "mean", "stddev");
        assertThat(clat.get("mean")).isInstanceOf(Double.class);
        Map<String, Object> percentiles = MiniJson.object(clat, "percentile");
        assertThat(percentiles).hasSize(17).containsKeys("1.000000", "50.000000", "99.000000", "99.990000");
        assertThat(percentiles.get("99.000000")).isInstanceOf(Long.class);
        assertThat(MiniJson.object(write, "lat_ns")).containsEntry("N", 64L);
        assertThat(MiniJson.object(write, "slat_ns")).containsEntry("N", 0L);
        assertThat(MiniJson.object(first, "read")).containsEntry("total_ios", 0L).containsKey("clat_ns");
        assertThat(MiniJson.object(first, "trim")).containsEntry("io_bytes", 0L);

        Map<String, Object> sync = MiniJson.object(first, "sync");
        assertThat(sync).containsEntry("total_ios", 32L);
        Map<String, Object> syncLatency = MiniJson.object(sync, "lat_ns");
        assertThat(syncLatency).containsEntry("N", 32L);
        assertThat(MiniJson.object(syncLatency, "percentile").get("99.000000")).isInstanceOf(Long.class);

        assertThat(first.get("usr_cpu")).isInstanceOf(Double.class);
        assertThat(MiniJson.object(first, "latency_us")).containsKeys("2", "4", "10", "1000");
        assertThat(MiniJson.object(first, "latency_ms")).containsKeys("2000", ">=2000");
        assertThat(MiniJson.object(first, "iodepth_level")).containsEntry("1", 100.0);

        Map<String, Object> iomap = MiniJson.object(first, "iomap");
        assertThat(iomap.keySet()).contains("app_bytes_written", "device_bytes_written", "device_data_bytes_written",
                "device_metadata_bytes_written", "write_amplification", "device_bytes_read", "map_blocks_calls",
                "ioends", "folios_by_order", "folio_states_allocated");
        assertThat(iomap.get("write_amplification")).isInstanceOf(Double.class);
        for (String key : List.of("app_bytes_written", "device_bytes_written", "device_data_bytes_written",
                "device_metadata_bytes_written", "device_bytes_read", "map_blocks_calls", "ioends",
                "folio_states_allocated")) {
            assertThat(iomap.get(key)).as(key).isInstanceOf(Long.class);
        }
        assertThat(MiniJson.object(iomap, "folios_by_order")).containsKeys("0", "12").allSatisfy((order, count) ->
                assertThat(count).isInstanceOf(Long.class));
    }
}

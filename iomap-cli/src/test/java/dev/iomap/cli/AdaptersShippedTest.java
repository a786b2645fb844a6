package dev.iomap.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 20: the {@code iomap} command ships every adapter of the repository. The reactor is the list:
 * every module of the root pom that declares an {@code AdapterPlugin} service must be a runtime
 * dependency of iomap-cli (so it lands in the shaded {@code iomap.jar}, whose services are merged), and
 * its adapters must be listed by {@code iomap adapters} and {@code --version}. A new adapter module
 * fails this test until the CLI's pom names it; no CLI code names an adapter.
 */
class AdaptersShippedTest {
    private static final Path REPOSITORY = Path.of(System.getProperty("user.dir")).getParent();
    private static final String SERVICE = "src/main/resources/META-INF/services/dev.iomap.spi.AdapterPlugin";

    @Test
    void everyAdapterModuleOfTheReactorIsARuntimeDependencyOfTheCli() throws IOException {
        String cliPom = Files.readString(REPOSITORY.resolve("iomap-cli/pom.xml"));
        List<String> modules = adapterModules();
        assertThat(modules).as("adapter modules of the reactor")
                .contains("adapter-xfs-like", "adapter-gfs2-like", "adapter-bcachefs-like", "adapter-zonefs-like");
        for (String module : modules) {
            Pattern dependency = Pattern.compile("<artifactId>" + Pattern.quote(module)
                    + "</artifactId>\\s*<scope>runtime</scope>");
            assertThat(dependency.matcher(cliPom).find()).as(module + " as a runtime dependency of iomap-cli")
                    .isTrue();
        }
    }

    @Test
    void adaptersListsEachShippedAdapterWithItsDeviceAndCapabilities() {
        Cli adapters = Cli.run("adapters");

        assertThat(adapters.status()).as(adapters.err()).isZero();
        assertThat(adapters.err()).isEmpty();
        assertThat(adapters.out()).contains("zonefs-like (zoned device): zonefs: one file per zone of a zoned"
                + " device, sequential zone files append-only at the write pointer\n"
                + "    capabilities: TRUNCATE, RANDOM_WRITE, DURABLE_FSYNC, DIRECT_IO\n");
        assertThat(adapters.out()).contains("xfs-like (block device): XFS model: ");
        assertThat(adapters.out()).contains("gfs2-like (block device): ", "bcachefs-like (block device): ");
        List<String> names = new ArrayList<>();
        for (String line : adapters.out().lines().toList()) {
            if (!line.startsWith(" ")) {
                names.add(line.substring(0, line.indexOf(' ')));
            }
        }
        assertThat(names).as("one block per adapter, by name").isSorted().doesNotHaveDuplicates()
                .contains("bcachefs-like", "gfs2-like", "xfs-like", "zonefs-like");
    }

    @Test
    void versionNamesTheAdaptersAndWhichNeedAZonedDevice() {
        Cli version = Cli.run("--version");

        assertThat(version.status()).isZero();
        List<String> lines = version.out().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("iomap4j-");
        assertThat(lines.get(1)).startsWith("adapters: ").contains("bcachefs-like, ", "gfs2-like, ",
                "xfs-like, ", "zonefs-like (zoned)").doesNotContain("xfs-like (zoned)");
    }

    /** @return the root pom's modules, other than the examples, that declare an adapter plugin service */
    private static List<String> adapterModules() throws IOException {
        String rootPom = Files.readString(REPOSITORY.resolve("pom.xml"));
        List<String> modules = new ArrayList<>();
        Matcher module = Pattern.compile("<module>([^<]+)</module>").matcher(rootPom);
        while (module.find()) {
            // examples/ holds worked examples for adapter authors (ext2-like), not shipped adapters
            if (!module.group(1).startsWith("examples/")
                    && Files.isRegularFile(REPOSITORY.resolve(module.group(1)).resolve(SERVICE))) {
                modules.add(module.group(1));
            }
        }
        return modules;
    }
}

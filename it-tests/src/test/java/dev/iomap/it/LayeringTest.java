package dev.iomap.it;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import org.junit.jupiter.api.Test;

/**
 * The module arrows (README.md, Modules) point one way: adapters (every {@code adapter-*} module, support library
 * included) and the test kit see {@code iomap-api}, never the engine in {@code dev.iomap.core}. The
 * classes are imported from the adapter jars (or reactor {@code target/classes}) on the test class
 * path; the test fails if it found none, so a broken import cannot pass silently.
 */
class LayeringTest {

    /** @return the class-path entries of the modules whose artifact name starts with {@code prefix} */
    private static List<Location> modulesNamed(String prefix, Set<String> found) {
        List<Location> locations = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path path = Path.of(entry);
            String module = moduleName(path);
            if (module != null && module.startsWith(prefix)) {
                found.add(module);
                locations.add(location(path));
            }
        }
        return locations;
    }

    private static Location location(Path path) {
        if (!path.toString().endsWith(".jar")) {
            return Location.of(path);
        }
        try (JarFile jar = new JarFile(path.toFile())) {
            return Location.of(jar);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code .../adapter-xfs-like/target/classes} or {@code .../adapter-xfs-like-0.1.0-SNAPSHOT.jar}. */
    private static String moduleName(Path path) {
        String file = path.getFileName() == null ? "" : path.getFileName().toString();
        if (file.equals("classes") && path.getParent() != null && path.getParent().getParent() != null
                && path.getParent().getFileName().toString().equals("target")) {
            return path.getParent().getParent().getFileName().toString();
        }
        if (file.endsWith(".jar")) {
            return file.replaceFirst("-\\d.*\\.jar$", "");
        }
        return null;
    }

    private static JavaClasses importModules(String prefix, Set<String> found) {
        return new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importLocations(modulesNamed(prefix, found));
    }

    @Test
    void adaptersNeverUseTheCore() {
        Set<String> modules = new TreeSet<>();
        JavaClasses adapters = importModules("adapter-", modules);
        assertThat(modules).as("adapter modules on the class path").contains("adapter-support", "adapter-xfs-like");
        assertThat(adapters).as("adapter classes imported").isNotEmpty();
        noClasses().should().dependOnClassesThat().resideInAPackage("dev.iomap.core..")
                .because("adapters compile against iomap-api only (README.md, Modules)")
                .check(adapters);
    }

    @Test
    void theTestKitNeverUsesTheCore() {
        Set<String> modules = new TreeSet<>();
        JavaClasses kit = importModules("iomap-testkit", modules);
        assertThat(kit).as("test kit classes imported").isNotEmpty();
        noClasses().should().dependOnClassesThat().resideInAPackage("dev.iomap.core..")
                .because("the kit tests any engine through iomap-api (README.md, Modules)")
                .check(kit);
    }

    @Test
    void snapfsTheKitsExampleAdapterNeverUsesTheCore() {
        JavaClasses snapfs = new ClassFileImporter().importPackages("dev.iomap.testkit.snapfs");
        assertThat(snapfs).isNotEmpty();
        noClasses().should().dependOnClassesThat().resideInAPackage("dev.iomap.core..").check(snapfs);
    }

    /**
     * Inside iomap-api the arrows point one way: devices know nothing else, the application API
     * knows devices, the adapter SPI knows both; no cycle.
     */
    @Test
    void theApiPackagesLayerDeviceThenApiThenSpi() {
        Set<String> modules = new TreeSet<>();
        JavaClasses api = importModules("iomap-api", modules);
        assertThat(modules).containsExactly("iomap-api");
        assertThat(api.containPackage("dev.iomap.device")).isTrue();
        assertThat(api.containPackage("dev.iomap.spi")).isTrue();
        noClasses().that().resideInAPackage("dev.iomap.device")
                .should().dependOnClassesThat().resideInAnyPackage("dev.iomap.api", "dev.iomap.spi")
                .because("devices are the bottom layer (README.md, Modules)")
                .check(api);
        noClasses().that().resideInAPackage("dev.iomap.api")
                .should().dependOnClassesThat().resideInAPackage("dev.iomap.spi")
                .because("applications never see the adapter SPI")
                .check(api);
        noClasses().should().dependOnClassesThat().resideInAnyPackage("dev.iomap.core..", "dev.iomap.devices..")
                .because("the API has no implementation in it")
                .check(api);
        com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices()
                .matching("dev.iomap.(*)..").should().beFreeOfCycles().check(api);
    }

    /**
     * The core learns what an adapter does by calling the SPI as declared, never by looking at the
     * adapter's classes: no method lookup by reflection anywhere in iomap-core (issue 39).
     */
    @Test
    void theCoreNeverLooksUpMethodsByReflection() {
        Set<String> modules = new TreeSet<>();
        JavaClasses core = importModules("iomap-core", modules);
        assertThat(modules).containsExactly("iomap-core");
        assertThat(core).isNotEmpty();
        noClasses().should().callMethod(Class.class, "getMethod", String.class, Class[].class)
                .orShould().callMethod(Class.class, "getDeclaredMethod", String.class, Class[].class)
                .orShould().callMethod(Class.class, "getMethods")
                .orShould().callMethod(Class.class, "getDeclaredMethods")
                .because("an SPI is called as declared; an optional hook is a default method")
                .check(core);
    }

    /**
     * iomap-core in two layers with one-way arrows (issue 39, item 3): the page cache
     * ({@code dev.iomap.core.mm}, the kernel's mm/) names no class of the core outside it; it reaches
     * the filesystem above only through its own {@code AddressSpaceOps} and {@code WritebackDomain}.
     * The iomap layer ({@code dev.iomap.core}, the kernel's fs/iomap/) does not know the direct I/O
     * path or the VFS that stand on it, nor the tracepoints' own package knows the iomap layer.
     */
    @Test
    void theCoresPageCacheLayerNeverUsesTheIomapLayerAboveIt() {
        Set<String> modules = new TreeSet<>();
        JavaClasses core = importModules("iomap-core", modules);
        assertThat(modules).containsExactly("iomap-core");
        assertThat(core.containPackage("dev.iomap.core.mm")).as("the page-cache layer").isTrue();
        assertThat(core.containPackage("dev.iomap.core")).as("the iomap layer").isTrue();
        noClasses().that().resideInAPackage("dev.iomap.core.mm..")
                .should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("dev.iomap.core..")
                        .and(JavaClass.Predicates.resideOutsideOfPackage("dev.iomap.core.mm..")))
                .because("the page cache is the bottom layer of the core (docs/design-notes.md, issue 39, item 3)")
                .check(core);
        noClasses().that().resideInAPackage("dev.iomap.core")
                .should().dependOnClassesThat().resideInAnyPackage("dev.iomap.core.dio..", "dev.iomap.core.vfs..",
                        "dev.iomap.core.example..")
                .because("direct I/O and the VFS stand on the iomap layer, not the reverse")
                .check(core);
        noClasses().that().resideInAPackage("dev.iomap.core.trace..")
                .should().dependOnClassesThat().resideInAPackage("dev.iomap.core")
                .because("tracepoints name what they record in API and page-cache terms")
                .check(core);
    }

    @Test
    void devicesDependOnTheDeviceApiOnly() {
        Set<String> modules = new TreeSet<>();
        JavaClasses devices = importModules("iomap-devices", modules);
        assertThat(modules).containsExactly("iomap-devices");
        assertThat(devices).isNotEmpty();
        noClasses().should().dependOnClassesThat()
                .resideInAnyPackage("dev.iomap.core..", "dev.iomap.spi..", "dev.iomap.testkit..", "dev.iomap.adapter..")
                .because("iomap-devices depends on iomap-api only, and implements devices, not filesystems")
                .check(devices);
    }

    /** The front ends reach filesystems through the API and devices through iomap-devices. */
    @Test
    void nioAndFuseUseTheApiNotTheCore() {
        Set<String> modules = new TreeSet<>();
        JavaClasses frontEnds = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importLocations(concat(modulesNamed("iomap-nio", modules), modulesNamed("iomap-fuse", modules)));
        assertThat(modules).contains("iomap-nio", "iomap-fuse");
        noClasses().should().dependOnClassesThat().resideInAPackage("dev.iomap.core..")
                .because("NIO and FUSE serve any IomapFileSystem (README.md, Modules)")
                .check(frontEnds);
    }

    private static List<Location> concat(List<Location> first, List<Location> second) {
        List<Location> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }
}

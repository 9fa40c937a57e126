package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * The build's release rules, read from the POMs: a module is either a library (deployed, with sources and
 * javadoc jars, listed in rds4j-bom) or sets maven.deploy.skip. A new module has to be one or the other.
 */
class ReleaseLayoutTest
{
    private static final Path ROOT = Paths.get(System.getProperty("rds4j.root", ".."));
    private static final Set<String> LIBRARIES =
        Set.of("rds-api", "rds-core", "transport-tcp", "transport-ib", "rds4j-micrometer");

    @Test
    void everyModuleIsALibraryInTheBomOrIsNeverDeployed() throws Exception
    {
        final Set<String> libraries = new TreeSet<>();
        final Set<String> skipped = new TreeSet<>();
        for (final String module : children(element(pom(ROOT), "modules"), "module"))
        {
            if (module.equals("bom"))
            {
                continue;
            }
            final Element pom = pom(ROOT.resolve(module));
            final String artifactId = text(pom, "artifactId");
            final List<String> plugins = children(element(element(pom, "build"), "plugins"), "plugin", "artifactId");
            if ("true".equals(text(element(pom, "properties"), "maven.deploy.skip")))
            {
                skipped.add(artifactId);
                assertFalse(plugins.contains("maven-source-plugin"), artifactId + " is not deployed: no sources jar");
            }
            else
            {
                libraries.add(artifactId);
                assertTrue(plugins.containsAll(List.of("maven-source-plugin", "maven-javadoc-plugin")),
                    artifactId + " is deployed: it needs its sources and javadoc jars");
            }
        }
        assertEquals(LIBRARIES, libraries);
        assertEquals(Set.of("samples", "fault-tests", "jmh", "compare"), skipped);

        final Element bom = pom(ROOT.resolve("bom"));
        assertNull(element(bom, "parent"), "an imported BOM must not bring the parent's version pins");
        assertEquals("rds4j-bom", text(bom, "artifactId"));
        assertEquals(text(pom(ROOT), "version"), text(bom, "version"));
        assertEquals(LIBRARIES, new TreeSet<>(children(element(element(bom, "dependencyManagement"), "dependencies"),
            "dependency", "artifactId")));
    }

    private static Element pom(final Path directory) throws Exception
    {
        return DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(directory.resolve("pom.xml").toFile())
            .getDocumentElement();
    }

    /** @return the text of each child element {@code name} of {@code parent} (or of its {@code path} child). */
    private static List<String> children(final Element parent, final String name, final String... path)
    {
        final List<String> texts = new ArrayList<>();
        for (Node node = parent == null ? null : parent.getFirstChild(); node != null; node = node.getNextSibling())
        {
            if (node instanceof Element && node.getNodeName().equals(name))
            {
                texts.add(path.length == 0 ? node.getTextContent().trim() : text((Element)node, path[0]));
            }
        }
        return texts;
    }

    /** @return the first child element {@code name} of {@code parent}, or null. */
    private static Element element(final Element parent, final String name)
    {
        for (Node node = parent == null ? null : parent.getFirstChild(); node != null; node = node.getNextSibling())
        {
            if (node instanceof Element && node.getNodeName().equals(name))
            {
                return (Element)node;
            }
        }
        return null;
    }

    /** @return the text of the child element {@code name} of {@code parent}, or null. */
    private static String text(final Element parent, final String name)
    {
        final Element element = element(parent, name);
        return element == null ? null : element.getTextContent().trim();
    }
}

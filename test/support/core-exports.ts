/**
 * What `@stackvm/core`'s entry point exports, and which of those names the other
 * packages, the tests, the scripts and the infrastructure import: an export no
 * one imports is surface that only widens what core must keep stable.
 */
import { readFileSync } from "node:fs";
import ts from "typescript";
import { sourceFiles } from "./source-files";

function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
}

/** The names a module's `export { … } from` lists give (an `export *` is refused: it hides what is exported). */
export function exportedNames(file: string): string[] {
  const names: string[] = [];
  parse(file).forEachChild((node) => {
    if (!ts.isExportDeclaration(node)) return;
    if (!node.exportClause || !ts.isNamedExports(node.exportClause)) {
      throw new Error(`${file}: export * hides what the entry point exports; name each export`);
    }
    for (const element of node.exportClause.elements) names.push(element.name.text);
  });
  return names;
}

/** Every name imported (or re-exported) from `specifier` by the files under `dirs`, except those under `skip`. */
export function namesImportedFrom(
  specifier: string,
  dirs: readonly string[],
  skip: string,
): Set<string> {
  const used = new Set<string>();
  for (const file of dirs.flatMap(sourceFiles)) {
    if (file.startsWith(skip)) continue;
    parse(file).forEachChild((node) => {
      if (!ts.isImportDeclaration(node) && !ts.isExportDeclaration(node)) return;
      const from = node.moduleSpecifier;
      if (!from || !ts.isStringLiteral(from) || from.text !== specifier) return;
      const bindings = ts.isImportDeclaration(node)
        ? node.importClause?.namedBindings
        : node.exportClause;
      if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
        for (const element of bindings.elements)
          used.add((element.propertyName ?? element.name).text);
      } else if (bindings) {
        throw new Error(
          `${file}: a namespace import of ${specifier} hides what it uses; name each import`,
        );
      }
    });
  }
  return used;
}

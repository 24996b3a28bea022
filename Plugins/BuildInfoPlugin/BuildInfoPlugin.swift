import Foundation
import PackagePlugin

/// Bakes the git commit and the build date into the `BuildInfo` target on every build, with no
/// manual step: a prebuild command runs `/bin/sh` on `Scripts/build-info.sh`, which rewrites the
/// generated file only when its content would change, so an incremental build recompiles nothing.
@main
struct BuildInfoPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
        let package = context.package.directoryURL
        let output = context.pluginWorkDirectoryURL.appending(path: "Generated")
        return [
            .prebuildCommand(
                displayName: "BuildInfo: version, commit and build date",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [
                    package.appending(path: "Scripts/build-info.sh").path, package.path,
                    output.appending(path: "BuildInfo+Generated.swift").path,
                ],
                environment: ProcessInfo.processInfo.environment.filter { ["SOURCE_DATE_EPOCH", "PATH", "HOME"].contains($0.key) },
                outputFilesDirectory: output)
        ]
    }
}

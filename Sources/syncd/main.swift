import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// syncd: the sync server. Commands are parsed by CommandLineArguments (the product takes no packages):
// usage errors print to stderr and exit 2, runtime errors exit 1.
exit(Command.main(Array(CommandLine.arguments.dropFirst())))

import Crypto
import Foundation

public struct OperatorSeal: Sendable {
    private let keyBytes: [UInt8]
    private var key: SymmetricKey { SymmetricKey(data: keyBytes) }

    /// 32 bytes, base64 (`openssl rand -base64 32`).
    public init?(base64 text: String) {
        guard let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)), bytes.count == 32
        else { return nil }
        keyBytes = Array(bytes)
    }

    /// The command with its seal.
    public func sealed<Command: OperatorCommand>(_ command: Command) -> Command {
        var sealed = command
        sealed.seal = Data(mac(command)).base64EncodedString()
        return sealed
    }

    /// True when the command carries a seal made with this key for exactly its content.
    public func verifies<Command: OperatorCommand>(_ command: Command) -> Bool {
        guard let seal = command.seal, let given = Data(base64Encoded: seal) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(given, authenticating: content(command), using: key)
    }

    private func mac<Command: OperatorCommand>(_ command: Command) -> HashedAuthenticationCode<SHA256> {
        HMAC<SHA256>.authenticationCode(for: content(command), using: key)
    }

    /// The command's name and fields, each length-prefixed, so no two commands share a content.
    private func content<Command: OperatorCommand>(_ command: Command) -> Data {
        var data = Data("geochat.operator.v1".utf8)
        for field in [Command.name] + command.sealedFields {
            let bytes = Data(field.utf8)
            data.append(contentsOf: withUnsafeBytes(of: UInt32(bytes.count).bigEndian, Array.init))
            data.append(bytes)
        }
        return data
    }
}

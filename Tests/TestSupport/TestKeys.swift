import Foundation
import GeoChatDomain

/// Fresh random keys for tests, as `openssl rand -base64 32` makes them.
public enum TestKeys {
    public static func base64() -> String {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
    }

    public static func operatorSeal() -> OperatorSeal { OperatorSeal(base64: base64())! }
    public static func loginSeal() -> LoginSeal { LoginSeal(base64: base64())! }
}

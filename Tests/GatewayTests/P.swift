import XCTest
final class P: XCTestCase { func testP() {} }

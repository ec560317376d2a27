import GeoChatBus
import GeoChatDomain
import GeoChatKafka

/// A say whose idempotency key is stored already: a retry of an earlier say.
struct DuplicateIdempotencyKey: Error {}

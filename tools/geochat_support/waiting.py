"""Waiting for an observable condition with a deadline, instead of sleeping a fixed time."""
import time


class ConditionTimeout(AssertionError):
    """A condition not met in time: an AssertionError, so a test that waits fails like one that asserts."""


def poll_until(condition, timeout, interval=0.1):
    """Calls `condition` every `interval` seconds until it returns something truthy (returned) or
    `timeout` seconds passed (returns the last falsy value)."""
    deadline = time.monotonic() + timeout
    while True:
        last = condition()
        if last or time.monotonic() >= deadline:
            return last
        time.sleep(interval)


def wait_until(condition, timeout=10.0, interval=0.1, message="condition"):
    """Like poll_until, and raises ConditionTimeout when the condition is not met in time."""
    last = poll_until(condition, timeout, interval)
    if not last:
        raise ConditionTimeout(f"{message} not met within {timeout}s (last: {last!r})")
    return last

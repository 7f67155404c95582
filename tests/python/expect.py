"""What the multi-process case scripts share (ddp_case_rank.py,
c10d_rank.py): a case that expects an error prints it for the test to
check."""


def expect_error(fn, *words):
    """Runs fn, which must raise an error whose text holds every one of
    `words`; prints its first line as "CASE-ERROR: ..."."""
    try:
        fn()
    except Exception as e:  # the case's expected refusal
        text = str(e)
        missing = [w for w in words if w not in text]
        if missing:
            raise AssertionError(f"the error lacks {missing}: {text}") from e
        print(f"CASE-ERROR: {text.splitlines()[0]}", flush=True)
        return
    raise AssertionError("no error was raised")

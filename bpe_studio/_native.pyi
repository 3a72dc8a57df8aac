# Type stub of the native kernel built from rust/ (bpe_studio._native); see rust/src/lib.rs.
class MergeKernel:
    def __init__(
        self,
        data: bytes,
        width: int,
        lengths: list[int],
        freqs: list[int],
        token_bytes: list[bytes],
        *,
        max_token_length: int | None = None,
    ) -> None: ...
    def best(self) -> tuple[int, int, int] | None: ...
    def merge_top(self) -> tuple[int, bool]: ...
    def __len__(self) -> int: ...

def count_gpt2(texts: list[str], classes: bytes) -> tuple[dict[str, int], int] | int: ...

"""IR enums with the member spellings of the upstream DSL (``pl.FunctionType.InCore``)."""

from __future__ import annotations

from enum import Enum, IntEnum


class FunctionType(Enum):

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    Opaque = "Opaque"
    Orchestration = "Orchestration"
    InCore = "InCore"
    AIC = "AIC"
    AIV = "AIV"
    Group = "Group"
    Spmd = "Spmd"
    Inline = "Inline"
    Graph = "Graph"


class Level(Enum):
    AIV = "AIV"
    AIC = "AIC"
    CORE_GROUP = "CORE_GROUP"
    CHIP_DIE = "CHIP_DIE"
    CHIP = "CHIP"
    HOST = "HOST"
    CLUSTER_0 = "CLUSTER_0"
    CLUSTER_1 = "CLUSTER_1"
    CLUSTER_2 = "CLUSTER_2"
    GLOBAL = "GLOBAL"
    L2CACHE = "CHIP_DIE"
    PROCESSOR = "CHIP"
    UMA = "CHIP"
    NODE = "HOST"
    POD = "CLUSTER_0"
    CLOS1 = "CLUSTER_1"
    CLOS2 = "CLUSTER_2"

    @property
    def linqu(self) -> int:
        """Hierarchy depth: AIV/AIC/CORE_GROUP 0 ... GLOBAL 7."""
        return _LINQU[self.value]


_LINQU = {"AIV": 0, "AIC": 0, "CORE_GROUP": 0, "CHIP_DIE": 1, "CHIP": 2, "HOST": 3,
          "CLUSTER_0": 4, "CLUSTER_1": 5, "CLUSTER_2": 6, "GLOBAL": 7}


class Role(Enum):
    Orchestrator = "Orchestrator"
    SubWorker = "SubWorker"


class ForKind(Enum):
    Sequential = "Sequential"
    Parallel = "Parallel"
    Unroll = "Unroll"
    Pipeline = "Pipeline"


class MemorySpace(Enum):

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    DDR = "DDR"
    Vec = "Vec"
    Mat = "Mat"
    Left = "Left"
    Right = "Right"
    Acc = "Acc"
    Bias = "Bias"
    LeftScale = "LeftScale"
    RightScale = "RightScale"
    ScalarLocal = "ScalarLocal"


# The buffers of the cube unit (AIC): a tile living in one of them is cube work.
CUBE_SPACES = frozenset({MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc, MemorySpace.Bias})


class TileLayout(Enum):
    none_box = "none_box"
    row_major = "row_major"
    col_major = "col_major"


class TensorLayout(Enum):
    ND = "ND"
    DN = "DN"
    NZ = "NZ"
    MX_A_ZZ = "MX_A_ZZ"
    MX_B_NN = "MX_B_NN"


class PadValue(IntEnum):
    null = 0
    zero = 1
    max = 2
    min = 3


class MaskPattern(IntEnum):
    """Which columns a mask-pattern gather keeps, read right to left: ``P0101`` keeps columns 0, 2, 4, ...;
    ``P1010`` columns 1, 3, 5, ...; ``P0001`` .. ``P1000`` one column in four; ``P1111`` every column."""

    P0101 = 1
    P1010 = 2
    P0001 = 3
    P0010 = 4
    P0100 = 5
    P1000 = 6
    P1111 = 7


class CompactMode(Enum):
    null = "null"
    normal = "normal"


class SplitMode(IntEnum):
    NONE = 0
    UP_DOWN = 1
    LEFT_RIGHT = 2


class AtomicType(IntEnum):
    None_ = 0
    Add = 1


class PipeType(Enum):
    MTE1 = "MTE1"
    MTE2 = "MTE2"
    MTE3 = "MTE3"
    M = "M"
    V = "V"
    S = "S"
    FIX = "FIX"
    ALL = "ALL"


class ParamDirection(Enum):
    In = "In"
    Out = "Out"
    InOut = "InOut"


class ArgDirection(Enum):
    """Per-argument direction at a call site; value is the DSL marker name (``pl.adir.input``)."""

    __hash__ = object.__hash__  # members are singletons compared by identity: hash them in C

    Input = "input"
    Output = "output"
    InOut = "inout"
    OutputExisting = "output_existing"
    NoDep = "no_dep"
    Scalar = "scalar"


class CoreType(Enum):
    """Kept for upstream compatibility (``pypto.ir.CoreType``); pypto itself names cores ``aiv``/``aic``."""

    VECTOR = "VECTOR"
    CUBE = "CUBE"


class ScopeMode(Enum):
    AUTO = "AUTO"
    MANUAL = "MANUAL"


# (level, role) implied by a function type; others keep what was given.
FUNCTION_TYPE_LEVEL: dict[FunctionType, tuple[Level, Role]] = {
    FunctionType.Orchestration: (Level.CHIP, Role.Orchestrator),
    FunctionType.Graph: (Level.CHIP, Role.Orchestrator),
    FunctionType.InCore: (Level.CHIP_DIE, Role.SubWorker),
    FunctionType.AIC: (Level.AIC, Role.SubWorker),
    FunctionType.AIV: (Level.AIV, Role.SubWorker),
    FunctionType.Group: (Level.CORE_GROUP, Role.SubWorker),
}

INCORE_TYPES = frozenset({FunctionType.InCore, FunctionType.AIC, FunctionType.AIV})
ORCH_TYPES = frozenset({FunctionType.Orchestration, FunctionType.Graph})

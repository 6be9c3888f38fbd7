"""The value-flow layer's answers do not depend on the order of the questions: a value computed
while a cycle (``self.mean`` assigned from a local computed from ``self.mean``) was still open
is not kept for later questions."""
import libcst as cst

from torchmemlint.semantics import SemanticModel

SOURCE = '''
import torch


class RunningMoments:
    def __init__(self):
        self.mean = torch.zeros(1)

    def __call__(self, x):
        delta = x.mean(dim=0) - self.mean
        new_mean = self.mean + delta / 2
        self.mean = new_mean
        return self.mean
'''


def _assigned(model: SemanticModel, name: str) -> cst.Assign:
    return next(a for a in model.tree.nodes(cst.Assign)
                if model.module.code_for_node(a.targets[0].target) == name)


def test_value_computed_inside_a_cycle_is_not_kept() -> None:
    model = SemanticModel(cst.parse_module(SOURCE))
    delta = _assigned(model, "delta")
    new_mean = _assigned(model, "new_mean")
    # Asking for ``delta`` first opens ``self.mean``, whose assignment reads ``new_mean``, whose
    # value reads ``delta`` again (still open): that ``new_mean`` is provisional.
    assert "x" in model.flow.value(delta.value, delta).params
    assert "x" in model.flow.value(new_mean.value, new_mean).params
    assert model.flow.value(new_mean.value, new_mean).kind == "tensor"


def test_class_attribute_sees_every_assignment() -> None:
    model = SemanticModel(cst.parse_module(SOURCE))
    delta = _assigned(model, "delta")
    model.flow.value(delta.value, delta)
    cls = model.scopes.classes_by_name["RunningMoments"]
    assert "x" in model.flow.class_attribute(cls, "mean").params


JOINS = '''
import torch


class Metric:
    def __init__(self):
        self.preds = torch.zeros(0)

    def update(self, preds):
        self.preds = torch.cat([self.preds, preds])

    @staticmethod
    def logits(positives, negatives):
        positives = torch.cat([positives, negatives])
        return positives.sum(-1)
'''


def test_a_join_onto_self_keeps_its_argument_and_one_onto_a_local_name_does_not() -> None:
    model = SemanticModel(cst.parse_module(JOINS))
    update, logits = (next(f for f in model.tree.nodes(cst.FunctionDef) if f.name.value == name)
                      for name in ("update", "logits"))
    assert [(k.param, k.into, k.joined) for k in model.stores.kept_parameters(update)] == [("preds", "self", True)]
    # (a static method's first parameter is no ``self``: rebinding it keeps nothing)
    assert model.stores.kept_parameters(logits) == []


PACKED_LEAF = '''
import torch

def collect(model):
    pairs = []
    for name, p in model.named_parameters():
        pair = (name, p)
        scaled = p * 2
        pairs.append(pair)
    return pairs
'''


def test_a_tuple_holding_a_parameter_holds_no_graph_but_its_element_is_a_leaf() -> None:
    model = SemanticModel(cst.parse_module(PACKED_LEAF))
    pair = _assigned(model, "pair")
    scaled = _assigned(model, "scaled")
    packed = model.flow.value(pair.value, pair)
    assert not packed.graph
    assert packed.item(1).leaf
    assert model.flow.value(scaled.value, scaled).graph  # computed from the leaf: a graph


GUARDED_RETURNS = '''
import numpy as np
import torch

model = torch.nn.Linear(2, 2)


def to_number(data):
    if isinstance(data, np.ndarray):
        return data.reshape(1)[0]
    return data.item() if isinstance(data, torch.Tensor) else data


def forward_named(x, cfg):
    if isinstance(cfg, str):
        return model(x)
    raise TypeError(cfg)


loss = model(torch.ones(2)).sum()
number = to_number(loss)
out = forward_named(torch.ones(2), "a")
'''


def test_an_isinstance_branch_drops_the_graph_only_of_the_value_it_tests() -> None:
    model = SemanticModel(cst.parse_module(GUARDED_RETURNS))
    number = _assigned(model, "number")
    out = _assigned(model, "out")
    assert not model.flow.value(number.value, number).graph  # a NumPy array or ``.item()``: no graph
    assert model.flow.value(out.value, out).graph  # ``cfg`` is a string there, the model's output is not

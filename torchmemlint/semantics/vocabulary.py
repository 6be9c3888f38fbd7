"""Names and words the semantic layer recognises, kept free of LibCST so that the pre-screen
(``prescreen.py``, on Python's ``ast``) and the semantic model (on LibCST) share one definition."""
from __future__ import annotations

import re
from typing import Optional

# Methods a framework calls once per training/evaluation step.
PER_STEP_METHODS = frozenset({
    "training_step", "validation_step", "test_step", "predict_step", "train_step", "eval_step",
    "val_step", "training_step_end", "validation_step_end", "test_step_end", "compute_loss",
    "prediction_step", "on_train_batch_end", "on_validation_batch_end", "on_test_batch_end",
    "on_predict_batch_end", "on_train_batch_start", "on_validation_batch_start",
    "on_before_backward", "on_after_backward",
})

# A callback's method, called by a trainer's hook loop (``on_batch_end``, ``on_step_end``).
CALLBACK_METHOD = re.compile(r"^on_[a-z]\w*$")
# A Hugging Face ``TrainerCallback``'s hooks run once per optimizer step (``on_step_end``).
TRAINER_CALLBACK_STEP_METHODS = frozenset({"on_step_begin", "on_step_end", "on_substep_end"})
# The main process's check (``is_root_worker()``, ``accelerator.is_main_process``,
# ``state.is_world_process_zero``): on that process it holds every step.
MAIN_PROCESS_CHECK = re.compile(r"is_(?:root_worker|main_process|local_main_process|world_process_zero|"
                                r"local_process_zero|master|main_worker|rank_zero)")

# Framework hooks run once per epoch or per run (Lightning's ``on_train_epoch_start``, a
# callback's ``on_epoch_end``, Lightning 1's ``validation_epoch_end``): a reset there leaves a
# chain, or a container, growing over the epoch's steps.
PER_EPOCH_METHOD = re.compile(r"^on_(\w+_)?(epoch|fit|train|validation)_(start|end)$|"
                              r"^(training|validation|test|predict)_epoch_end$")  # (Lightning 1)
# Calls that run the function they get once per hyper-parameter trial.
SEARCH_DRIVERS = frozenset({"optimize", "fmin", "gp_minimize", "forest_minimize", "Tuner", "maximize", "minimize"})
# Registrations of a hook on a module or a tensor.
HOOK_REGISTRATIONS = frozenset({
    "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
    "register_full_backward_pre_hook", "register_backward_hook", "register_hook",
    "register_post_accumulate_grad_hook",
})
# Methods whose result holds no graph: Python values, integer/bool tensors, detached copies.
GRAPH_BREAKING_METHODS = frozenset({
    "item", "tolist", "numpy", "detach", "detach_", "size", "dim", "numel", "argmax", "argmin",
    "argsort", "eq", "ne", "lt", "le", "gt", "ge", "nonzero", "isnan", "isinf", "isfinite", "all",
    "any", "long", "int", "bool", "byte", "char", "short", "data_ptr", "element_size", "nelement",
    "stride", "storage_offset", "is_contiguous", "get_device", "keys", "__len__", "count",
    "state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "zero_grad", "train", "eval",
}) | HOOK_REGISTRATIONS
# Attributes of a tensor that are other tensors detached from its graph.
DETACHED_TENSOR_ATTRIBUTES = frozenset({"grad", "data"})
# Registrations of a function PyTorch calls on every forward pass of a module.
FORWARD_HOOK_REGISTRATIONS = frozenset({"register_forward_hook", "register_forward_pre_hook"})
# Container methods that keep their argument (not ``put``: queues are drained by their consumer).
STORING_METHODS = frozenset({"append", "extend", "insert", "add", "appendleft", "push"})
# Methods of a meter or metric object (``AverageMeter.update(loss, n)``) that may keep what they get,
# and the classes of other modules taken for such objects.
METER_METHODS = frozenset({"update", "add"})
METER_CLASS = re.compile(r"Meter$")

# Words of an iterable's identifiers that mark a loop running one step per iteration.
STEP_WORDS = frozenset({
    "loader", "loaders", "dataloader", "batches", "dataset", "datasets", "ds", "epoch", "epochs",
    "step", "steps", "iter", "iters", "iteration", "iterations", "episode", "episodes", "rollout",
    "rollouts", "bptt", "corpus",
})
# Words of a loop variable that name one step (the iterable may be a bare ``range(100)``).
STEP_TARGET_WORDS = frozenset({"epoch", "step", "episode", "iteration", "batch", "minibatch", "fold", "trial"})
_SETTING_WORDS = frozenset({"first", "size", "sizes", "shape", "norm", "dim", "mode", "type", "count", "len",
                            "start", "end", "stop", "offset"})
# The first word of a data split's name (``train_data``, ``test_data``).
_SPLIT_WORDS = frozenset({"train", "training", "val", "valid", "validation", "test", "testing", "eval", "dev"})
# How evaluation functions are named (``evaluate``, ``run_validation``, ``predict_batch``), and
# those that compute embeddings or features of a data set with a trained model
# (``get_text_embeddings``, ``embed_corpus``, ``encode_sentences``, ``extract_features``).
EVAL_FUNCTION = re.compile(
    r"^(?:_*)(?:eval|evaluate|evaluation|validate|validation|valid|val|test|predict|prediction|"
    r"infer|inference|score|compute_metrics|embed)(?:_|$)|_(?:eval|evaluate|evaluation|validate|validation|"
    r"val|test|predict|predictions|inference|infer|embeddings)(?:_|$)|"
    r"^(?:_*)(?:encode|extract)_(?:\w+_)?(?:sentences|texts|corpus|documents|dataset|images|features|"
    r"representations)$",
    re.IGNORECASE,
)
# Words that make the steps those of producing one output (a sampler's denoising steps, the
# points of an interpolation), not training or evaluation steps: ``num_inference_steps``.
_GENERATION_WORDS = frozenset({"inference", "denoising", "sampling", "diffusion", "ddim", "ddpm", "interp",
                               "interpolation", "generation", "decoding", "autoregressive"})
# Annotation names that can hold no tensor, however they are combined (``Optional[dict[str, int]]``).
NON_TENSOR_ANNOTATIONS = frozenset({
    "None", "bool", "int", "float", "complex", "str", "bytes", "set", "frozenset", "list", "dict", "tuple",
    "Optional", "Union", "Set", "FrozenSet", "List", "Dict", "Tuple", "Literal", "type", "Type",
})
# Callee names that are models or loss functions: calling one runs a forward pass. The last
# word of the name decides (``policy_net``, ``ddp_model``), or the first one followed only by a
# role suffix (``model_ema``, ``encoder_q``); ``policy_fn`` or ``model_path`` are not models.
MODEL_WORDS = frozenset({
    "model", "models", "net", "network", "encoder", "decoder", "backbone", "classifier",
    "generator", "discriminator", "critic", "actor", "policy", "criterion", "criterium", "crit", "lossfn",
    "teacher", "student", "unet", "vae", "lstm", "rnn", "gru", "mlp", "cnn", "autoencoder",
    "transformer", "qnet", "module", "loss", "lm", "detector", "layer", "denoiser", "vocoder",
    # architecture families, as scripts name the model they load (``vgg19 = models.vgg19()``)
    "vgg", "resnet", "resnext", "densenet", "alexnet", "inception", "googlenet", "efficientnet", "mobilenet",
    "vit", "deit", "swin", "convnext", "bert", "roberta", "gpt", "yolo", "detr",
})
# First words of names that handle models rather than run them.
_MODEL_HANDLING_VERBS = frozenset({
    "load", "save", "build", "make", "create", "init", "setup", "prepare", "freeze", "unfreeze", "reset",
    "wrap", "copy", "clone", "register", "export", "print", "log", "summarize", "count", "unwrap", "convert",
    "extract", "get", "move", "compile", "quantize", "fuse", "patch", "replace", "attach", "check", "validate",
    "add", "remove", "delete", "set", "find", "swap", "named",  # (``builder.add_module(name, m)`` registers one)
})
_LOSS_FUNCTION_NAMES = frozenset({"loss_fn", "loss_func", "loss_function", "loss_fct", "lossfn", "loss_module"})
_CALLABLE_SUFFIXES = frozenset({"fn", "func", "fct", "function", "module"})
# What a plain Python generator (not a GAN's generator network) yields.
_DATA_WORDS = frozenset({"item", "items", "data", "batch", "batches", "random", "rng", "number", "id", "key", "name",
                         "path", "file", "index", "example", "task", "seed", "chunk", "split"})
_ROLE_SUFFIXES = frozenset({"ema", "old", "new", "target", "ddp", "q", "k", "g", "d", "a", "b", "s", "t", "fp16",
                            "engine", "without_ddp", "wrapped", "eval", "train"})
EXACT_MODEL_NAMES = frozenset({"G", "D", "E", "netG", "netD", "netE", "Q", "pi", "ddp_model", "vf"})
def is_class_name(name: str) -> bool:
    """CamelCase names are classes (``Net``, ``QNetwork``); single letters like ``G`` are not."""
    return name[:1].isupper() and any(c.islower() for c in name) and name not in EXACT_MODEL_NAMES


def is_model_name(name: Optional[str]) -> bool:
    """Whether an identifier names a model or a loss function (see MODEL_WORDS); not one that
    does something to models (``load_models``, ``build_model``, ``save_model``)."""
    if not name or name.startswith("__") and name.endswith("__") or name == "call_module":
        return False  # (``obj.__module__`` is a string; torch.fx's ``graph.call_module`` adds a node)
    if name in EXACT_MODEL_NAMES or name.lower() in _LOSS_FUNCTION_NAMES:
        return True
    first, _, role = name.strip("_").partition("_")
    if first in EXACT_MODEL_NAMES and role.lower() in _ROLE_SUFFIXES:
        return True  # (CycleGAN's ``netG_A``, ``netD_B``)
    words = name.lower().strip("_").split("_")
    if len(words) > 1 and words[0] in _MODEL_HANDLING_VERBS or len(words) > 2 and words[-2] in ("for", "of", "from"):
        return False  # (``stats_for_generator`` is about a model, not one)
    if words[-1] == "generator" and len(words) > 1 and words[-2] in _DATA_WORDS:
        return False  # (a Python generator of items: ``item_generator``, ``batch_generator``)
    if words[-1].rstrip("0123456789") in MODEL_WORDS:
        return True
    if len(words) > 2 and ("_".join(words[-2:]) in _LOSS_FUNCTION_NAMES or
                           words[0] in ("criterion", "loss") and words[-1] in _CALLABLE_SUFFIXES):
        return True  # one of several losses: ``recon_loss_fn``, ``dice_loss_func``, ``criterion_reconstruct_fn``
    if len(words[-1]) > len("model") and words[-1].rstrip("0123456789").endswith("model"):
        return True  # one word run together (torch-ac's ``acmodel``, ``basemodel``)
    return words[0].rstrip("0123456789") in MODEL_WORDS and "_".join(words[1:]) in _ROLE_SUFFIXES


# ``torch.<name>`` that gives no tensor: namespaces, metadata, settings, predicates.
_TORCH_NON_TENSOR_NAMES = frozenset({
    "cuda", "backends", "distributed", "jit", "utils", "hub", "onnx", "package", "profiler", "testing",
    "version", "compile", "device", "dtype", "finfo", "iinfo", "Size", "Generator", "manual_seed", "seed",
    "no_grad", "enable_grad", "inference_mode", "save", "nn", "optim", "autograd", "distributions",
    "multiprocessing", "amp", "fx", "export", "library", "numel", "typename", "use_deterministic_algorithms",
    "cpu", "mps", "xpu", "npu", "accelerator", "overrides", "random", "futures", "result_type", "promote_types",
})


# A model's methods that run it on their arguments (``model.predict(u, items)``).
# torch.nn modules without parameters or buffers: calling one is a tensor operation on its input
# (its output holds a graph only where the input does), not a model's forward pass.
PARAMETER_FREE_MODULES = frozenset({
    "ReLU", "ReLU6", "LeakyReLU", "GELU", "SiLU", "Mish", "ELU", "SELU", "CELU", "Sigmoid", "Tanh", "Softmax",
    "LogSoftmax", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink",
    "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "Identity", "Flatten",
    "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d", "Upsample", "PixelShuffle", "PixelUnshuffle", "CosineSimilarity", "PairwiseDistance",
})
MODEL_RUNNING_METHODS = frozenset({"predict", "generate", "encode", "decode", "infer", "inference"})

# How the classes of model libraries are named (``NATransformerModel``, ``FairseqEncoder``,
# ``PreTrainedModel``, diffusers' ``ModelMixin``): a class of one of them that defines ``forward``
# is an ``nn.Module``.
MODEL_CLASS_SUFFIXES = ("Model", "ModelMixin", "Module", "Net", "Network", "Encoder", "Decoder", "Transformer",
                        "Layer", "Block", "Backbone", "Head", "Segmentor", "Detector", "Classifier", "Discriminator",
                        "Generator")


def torch_gives_no_tensor(name: str) -> bool:
    """``torch.<name>`` (or ``F.<name>``, ``torch.linalg.<name>``) gives no tensor: a namespace,
    metadata (``torch.finfo``), a setting or a predicate (``is_``/``has_``/``get_``/``set_``:
    ``torch.is_grad_enabled()``; ``torch.get_rng_state()`` is a tensor, but a generator's state,
    no part of any computation)."""
    return name in _TORCH_NON_TENSOR_NAMES or name.startswith(("is_", "has_", "get_", "set_"))


def names_a_cache(spelled: Optional[str]) -> bool:
    """A container or tensor named for a cache (``latents_cache`` behind ``--cache_latents``,
    ``self.kv_cache`` filled during generation) keeps what it holds on purpose."""
    return "cache" in (spelled or "").lower()


def names_segment_memories(spelled: Optional[str]) -> bool:
    """Transformer-XL's memories (``self.mems = outputs[1]``, carried from one segment to the
    next): the model that returns them has detached them (a stop-gradient by design; Hugging
    Face's ``mems`` too), so they hold no graph whatever the call they come from."""
    return (spelled or "").rpartition(".")[2].strip("_") == "mems"


# Names of text a batch carries beside its tensors (file names, paths, captions): a data loader's
# collate keeps strings as lists of strings, so they hold no tensor whatever the batch holds.
_TEXT_NAME = re.compile(r"(f|file_?|img_?|image_?|sample_?|video_?|audio_?)?(names?|paths?|urls?|captions?|texts?|"
                        r"sentences?|prompts?)")


def names_text(name: str) -> bool:
    """``fname``, ``image_paths``, ``captions``: a name for strings, not for a tensor."""
    return _TEXT_NAME.fullmatch(name.lower().strip("_")) is not None


# Names of integer values (lengths, positions, ids) that a model hands back beside its outputs
# (``scores, decode_lengths, sort_ind = decoder(...)``): integers hold no graph.
_INTEGER_NAME = re.compile(r"([a-z]+_)*(lens?|lengths?|ind|inds|indices|idx|idxs|ids|positions|counts?)")


def names_integers(name: str) -> bool:
    """``decode_lengths``, ``sort_ind``, ``token_ids``: a name for integers, which hold no graph."""
    return _INTEGER_NAME.fullmatch(name.lower().strip("_")) is not None


# Attributes that count (``data.num_graphs`` of a PyG batch, ``batch.num_nodes``, ``loader.batch_size``).
_COUNT_ATTRIBUTE = re.compile(r"num_[a-z_]+|[a-z_]+_count|batch_size")


def names_a_count(attribute: str) -> bool:
    """An attribute that holds a Python integer, even on an object of tensors."""
    return _COUNT_ATTRIBUTE.fullmatch(attribute.lower()) is not None


# Attribution methods (pytorch-grad-cam, Captum) whose call differentiates the model they wrap.
GRADIENT_EXPLAINER = re.compile(r"GuidedBackprop|Grad[Cc][Aa][Mm]|Saliency|IntegratedGradients|DeepLift|SmoothGrad|"
                                r"InputXGradient|GradientShap")
# The stride of ``range(0, n, batch_size)``: one batch of data per iteration.
BATCH_STRIDE = re.compile(r"batch|^bs$|_bs$", re.IGNORECASE)
# An iterable of one step's loss terms (``for i, loss in enumerate(losses_per_layer)``): a loop over
# it runs per term, however many backward passes it makes.
LOSS_TERMS = re.compile(r"^(?:\w+_)?losses(?:_\w+)?$|^loss_(?:terms|list|parts|components)$", re.IGNORECASE)
# The stride of a loop over chunks of a tensor or data set (``range(0, n, chunk_size)``).
CHUNK_STRIDE = re.compile(r"batch|chunk|^bs$|_bs$", re.IGNORECASE)
# An iterable that yields batches of data.
# Tensor methods (and ``torch`` functions) that cut a tensor into pieces.
TENSOR_PIECES = frozenset({"split", "chunk", "tensor_split", "unbind", "split_with_sizes"})
LOADER_ITERABLE = re.compile(r"loader|batches|dataset|\bdl\b|_dl\b", re.IGNORECASE)
# How a dataset object is named (``dset``, ``val_dataset``, ``self.ds``): ``x = dset[idx]`` reads one example.
DATASET_NAME = re.compile(r"(?:^|_)(?:dataset|dset|ds)$", re.IGNORECASE)
# A function that produces one output step by step (autoregressive decoding, sampling): its
# loops run over time steps of one input, not over training steps.
# How functions that turn one batch's outputs into results are named (``post_process_object_detection``).
POST_PROCESSING_FUNCTION = re.compile(r"(^|_)post_?process", re.IGNORECASE)
GENERATION_FUNCTION = re.compile(r"(^|_)(generate|generation|sample|sampling|decode|decoding|beam_search|greedy_search)(_|$)")
# Functions that run a trained model on new inputs (``infer``, ``run_inference``, ``predict``).
INFERENCE_FUNCTION = re.compile(r"(^|_)(infer|inference|predict)(_|$)")
# Identifiers of an iterable that say nothing about what it iterates over.
ITERATION_BUILTINS = frozenset({"iter", "enumerate", "zip", "range", "reversed", "sorted", "list", "tuple",
                                "tqdm", "trange", "islice", "itertools", "len", "self"})


def is_step_identifier(identifier: str) -> bool:
    """An identifier in a loop's iterable that marks one training/evaluation step per iteration
    (``train_loader``, ``epochs``, ``data``, ``rollouts``)."""
    lowered = identifier.lower()
    words = lowered.split("_")
    if len(words) > 1 and (words[-1] in _SETTING_WORDS or _GENERATION_WORDS.intersection(words)):
        return False  # ``rollout_batch_size`` is a setting, ``num_inference_steps`` one sample's steps
    if "callback" in words:
        return False  # ``callback_on_step_end_tensor_inputs``: the names a step callback is handed
    return identifier == "data" or lowered.endswith(("loader", "dataset")) or any(
        word.rstrip("0123456789") in STEP_WORDS for word in words
    ) or words[-1] == "data" and words[0] in _SPLIT_WORDS  # ``training_data``, ``val_data``


def is_step_target(identifier: str) -> bool:
    """A loop variable named for one step (``epoch``, ``batch_idx``), not for a setting
    (``batch_first``, ``batch_size``, ``step_size``)."""
    words = identifier.lower().split("_")
    if len(words) > 1 and (words[-1] in _SETTING_WORDS or _GENERATION_WORDS.intersection(words)):
        return False
    return any(word in STEP_TARGET_WORDS for word in words)


def makes_training_step(method: str, receiver: Optional[str]) -> bool:
    """``<receiver>.<method>(...)`` makes a training step: a backward pass, or an optimizer's or
    gradient scaler's step (``receiver`` spelled as a dotted name, None when it is not one)."""
    if method in ("backward", "manual_backward"):
        return True
    if method == "step":
        receiver = receiver or ""
        return stepped_optimizer(receiver, None) is not None or "scaler" in receiver.split(".")[-1].lower()
    return False


def stepped_optimizer(receiver: str, first_argument: Optional[str]) -> Optional[str]:
    """The optimizer that ``<receiver>.step(<first_argument>)`` steps, spelled: the receiver
    (``opt``, ``self.optimizer``, ``opt_g``, ``d_opt``), or the argument of a gradient scaler's
    ``step`` (``scaler.step(optimizer)``); None for a scheduler or anything else."""
    spelled = receiver.split(".")[-1]
    last = spelled.lower()
    if "scaler" in last:
        return first_argument
    if "sched" in last:
        return None
    if "optim" in last or last in ("opt", "optimiser") or last.startswith("opt_") or last.endswith("_opt") or \
            _OPTIMIZER_OF_A_ROLE.fullmatch(spelled):
        return receiver
    return None


# ``optG``, ``optD``, ``optE``: the optimizer of a GAN's generator, discriminator, encoder
_OPTIMIZER_OF_A_ROLE = re.compile(r"opt[A-Z][A-Za-z0-9]{0,3}")


def steps_environment(method: str, receiver_name: Optional[str]) -> bool:
    """``env.step(action)``: one reinforcement-learning environment step (``receiver_name``: the
    receiver's last identifier; DeepRL and its descendants call their environment wrapper a
    ``task``)."""
    receiver = (receiver_name or "").lower()
    return method == "step" and ("env" in receiver or receiver.endswith(("task", "tasks")))
# Methods of a module that return the module itself (``model = model.to(device)``).
MODULE_RETURNING_METHODS = frozenset({"to", "cuda", "cpu", "eval", "train", "half", "float", "double", "bfloat16",
                                      "requires_grad_", "to_empty", "share_memory"})
# Tensor methods that write into their receiver (``buf.mul_(m).add_(v)``, ``bank.index_copy_(0, i, v)``).
IN_PLACE_WRITES = frozenset({
    "add_", "sub_", "mul_", "div_", "copy_", "lerp_", "addcmul_", "addcdiv_", "index_add_", "index_copy_",
    "index_put_", "masked_scatter_", "scatter_", "scatter_add_", "put_", "clamp_",
})
# Tensor methods that overwrite their receiver with new numbers (``buf.zero_()``), in place: the
# receiver keeps its autograd history.
IN_PLACE_FILLS = frozenset({"zero_", "fill_", "uniform_", "normal_", "copy_", "mul_"})
# Functions that join tensors: ``acc = torch.cat([acc, x])`` grows ``acc`` by ``x``.
JOIN_FUNCTIONS = frozenset({
    "torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.vstack", "torch.hstack",
    "torch.dstack", "torch.row_stack", "torch.column_stack",
})
# Joins where joining pairwise equals joining all pieces at once (``stack`` adds a dimension).
ASSOCIATIVE_JOINS = JOIN_FUNCTIONS - {"torch.stack"}


# torchmetrics classes whose state is a list of every update's inputs (their ``compute`` needs all
# of them: AUROC, average precision, curves, rank correlations, retrieval metrics): called or
# ``update``d with a graph-attached value, such a metric keeps every step's graph until ``reset``.
LIST_STATE_METRIC = re.compile(
    r"(?:AUROC|AveragePrecision|ROC|PrecisionRecallCurve|CatMetric|SpearmanCorrCoef|KendallRankCorrCoef|"
    r"Retrieval[A-Za-z]*)$")
# What a metric object (or a collection of metrics) is called: ``met``, ``train_metrics``, ``auroc``.
METRIC_OBJECT_NAME = re.compile(r"(?:^|_)(?:met|metric|metrics|auroc|auc|roc)$", re.IGNORECASE)


def keeps_every_input(qualified: str) -> bool:
    """A torchmetrics class with list states (``LIST_STATE_METRIC``)."""
    return qualified.startswith("torchmetrics.") and LIST_STATE_METRIC.search(qualified) is not None

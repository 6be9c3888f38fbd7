"""Names the semantic layer reads as models (or not): the cases real code showed it."""
import pytest

from torchmemlint.semantics.vocabulary import is_model_name, names_text


@pytest.mark.parametrize("name, expected", [
    ("model", True), ("policy_net", True), ("lm", True), ("detector", True), ("vgg19", True),
    ("resnet50", True), ("criterion", True), ("encoder_q", True), ("acmodel", True),  # torch-ac's actor-critic
    ("build_model", False), ("model_path", False), ("call_module", False),  # torch.fx adds a node
    ("compute_feature_stats_for_generator", False),  # stylegan2-ada's metrics: about a model, not one
    ("features_of_model", False), ("__module__", False), (None, False),
    # one of several losses, as parameters are named for them
    ("recon_loss_fn", True), ("dice_loss_func", True), ("criterion_reconstruct_fn", True), ("crit", True),
    ("get_loss_fn", False), ("criterion_name", False), ("loss_history", False),
    ("image_generator", True), ("item_generator", False), ("batch_generator", False),  # a GAN's, or Python's
])
def test_model_names(name, expected):
    assert is_model_name(name) is expected


@pytest.mark.parametrize("name, expected", [
    ("fname", True), ("image_paths", True), ("captions", True), ("prompt", True),
    ("input_ids", False), ("images", False), ("pathway", False), ("named", False),
])
def test_text_names(name, expected):
    assert names_text(name) is expected

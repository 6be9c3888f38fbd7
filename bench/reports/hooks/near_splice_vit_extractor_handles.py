# Source: https://github.com/omerbt/Splice/issues/134
# Report: the ViT feature extractor registered hooks on every call and removed them, but never emptied its hook_handlers list, so the list (and per-step time) grew epoch after epoch; fixed by resetting the list in _clear_hooks (PR #135)
# Shape: fixed version: hooks are registered per step through a helper, every handle is .remove()d before the call returns and the handle list and output dict are reset
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class VitExtractor:
    BLOCK_KEY = "block"
    KEY_LIST = [BLOCK_KEY]

    def __init__(self, model, layers):
        self.model = model.eval()
        self.layers = set(layers)
        self.hook_handlers = []
        self.outputs_dict = {}
        self._init_hooks_data()

    def _init_hooks_data(self):
        self.outputs_dict = {key: [] for key in VitExtractor.KEY_LIST}

    def _get_block_hook(self):
        def _get_block_output(module, inp, output):
            self.outputs_dict[VitExtractor.BLOCK_KEY].append(output)

        return _get_block_output

    def _register_hooks(self):
        for block_idx, block in enumerate(self.model.blocks):
            if block_idx in self.layers:
                self.hook_handlers.append(block.register_forward_hook(self._get_block_hook()))

    def _clear_hooks(self):
        for handler in self.hook_handlers:
            handler.remove()
        self.hook_handlers = []

    def get_feature_from_input(self, input_img):
        self._register_hooks()
        self.model(input_img)
        feature = self.outputs_dict[VitExtractor.BLOCK_KEY]
        self._clear_hooks()
        self._init_hooks_data()
        return feature


def structure_loss(extractor, generated, target_keys):
    feats = extractor.get_feature_from_input(generated)
    keys = feats[-1][:, 1:, :]
    sim = F.normalize(keys, dim=-1) @ F.normalize(keys, dim=-1).transpose(1, 2)
    return F.mse_loss(sim, target_keys)


def train_splice(generator, extractor, inputs, target_keys, optimizer, steps, device):
    for step in range(steps):
        optimizer.zero_grad()
        out = generator(inputs.to(device))
        loss = structure_loss(extractor, out, target_keys)
        loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print(step, loss.item())

# Source: https://github.com/intel/neural-compressor/pull/1052
# Report: the AWQ calibration helper registered forward hooks that torch.cat every calibration batch's module inputs/outputs onto the previous ones; the reviewer flagged that the stored intermediate outputs grow with the number of samples (huge memory).
# Shape: hook closures keep a dict of device tensors that outlives the calibration loop and re-concatenate the whole history on every batch.
# Expect: TML008 line 24; TML008 line 35
import logging

import torch

logger = logging.getLogger(__name__)


def collect_module_io(model, module_hook_config, dataloader, iters=-1, device="cuda"):
    """Record the inputs/outputs of the modules named in module_hook_config.

    module_hook_config = {"fc1": ["output"], "fc2": ["input", "output"]}
    """
    input_values, output_values = {}, {}

    def _save_input_output_hook(name):
        def save_input_hook(module, inputs):
            inp = inputs[0]
            if name in input_values:
                try:
                    input_values[name] = torch.cat((input_values[name], inp), 0)  # expect: TML008
                except RuntimeError as e:
                    logger.error(e)
                    raise ValueError("Please unify the input shape for AWQ calibration.")
            else:
                input_values[name] = inp

        def save_output_hook(module, inputs, outputs):
            if isinstance(outputs, tuple):
                outputs = outputs[0]
            if name in output_values:
                output_values[name] = torch.cat((output_values[name], outputs), 0)  # expect: TML008
            else:
                output_values[name] = outputs

        return save_input_hook, save_output_hook

    hook_list = []
    for name, module in model.named_modules():
        if name in module_hook_config:
            save_input_hook, save_output_hook = _save_input_output_hook(name)
            if "input" in module_hook_config[name]:
                hook_list.append(module.register_forward_pre_hook(save_input_hook))
            if "output" in module_hook_config[name]:
                hook_list.append(module.register_forward_hook(save_output_hook))

    model.eval()
    with torch.no_grad():
        for i, (batch, _) in enumerate(dataloader):
            model(batch.to(device))
            if iters != -1 and i + 1 >= iters:
                break

    for h in hook_list:
        h.remove()
    return input_values, output_values

# Source: https://github.com/intel/neural-compressor/pull/1052
# Report: the AWQ calibration helper registered forward hooks that torch.cat every calibration batch's module inputs/outputs onto the previous ones; the reviewer flagged that the stored intermediate outputs grow with the number of samples (huge memory).
# Shape: fixed variant: the hooks keep only fixed-size per-channel running statistics (detached sums and counts), so memory no longer depends on how many batches are calibrated.
# Expect: near-miss: must be silent
import torch


def collect_module_stats(model, module_hook_config, dataloader, iters=-1, device="cuda"):
    """Record per-channel mean |x| of the inputs/outputs of the named modules.

    module_hook_config = {"fc1": ["output"], "fc2": ["input", "output"]}
    """
    input_stats, output_stats, counts = {}, {}, {}

    def _channel_abs_sum(t):
        t = t.detach()
        return t.abs().reshape(-1, t.shape[-1]).sum(dim=0), t.numel() // t.shape[-1]

    def _save_stats_hook(name):
        def save_input_hook(module, inputs):
            s, n = _channel_abs_sum(inputs[0])
            if name in input_stats:
                input_stats[name] = input_stats[name] + s
            else:
                input_stats[name] = s
            counts[(name, "input")] = counts.get((name, "input"), 0) + n

        def save_output_hook(module, inputs, outputs):
            if isinstance(outputs, tuple):
                outputs = outputs[0]
            s, n = _channel_abs_sum(outputs)
            if name in output_stats:
                output_stats[name] = output_stats[name] + s
            else:
                output_stats[name] = s
            counts[(name, "output")] = counts.get((name, "output"), 0) + n

        return save_input_hook, save_output_hook

    hook_list = []
    for name, module in model.named_modules():
        if name in module_hook_config:
            save_input_hook, save_output_hook = _save_stats_hook(name)
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
    input_means = {k: v / counts[(k, "input")] for k, v in input_stats.items()}
    output_means = {k: v / counts[(k, "output")] for k, v in output_stats.items()}
    return input_means, output_means

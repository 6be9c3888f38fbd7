# Source: https://github.com/verl-project/verl/issues/7166
# Report: the FSDP engine's forward_step returned model_output (log_probs, entropy) undetached and forward_backward_batch kept every micro-batch's output dict in output_lst until the mini-batch ended, so graphs the loss never traversed stayed alive: multi-GB growth that scaled with mini-batch size
# Shape: custom trainer engine; forward_step returns (loss, dict holding the live model_output dict); the micro-batch loop appends that dict to a list bound before the loop and only post-processes it after the last micro-batch
# Expect: TML001 line 65
from contextlib import nullcontext

import torch

from verl.workers.engine.utils import postprocess_batch_func, prepare_micro_batches


class FSDPEngineWithLMHead:
    def __init__(self, module, optimizer, dp_group, dp_size):
        self.module = module
        self.optimizer = optimizer
        self.dp_group = dp_group
        self.dp_size = dp_size

    def prepare_model_outputs(self, output, micro_batch, calculate_entropy):
        response_length = micro_batch.batch["responses"].size(-1)
        logits = output.logits[:, -response_length - 1 : -1, :].float()
        logits.div_(micro_batch.meta_info["temperature"])
        log_probs = torch.log_softmax(logits, dim=-1)
        log_probs = log_probs.gather(-1, micro_batch.batch["responses"].unsqueeze(-1)).squeeze(-1)
        model_output = {"log_probs": log_probs}
        if calculate_entropy:
            probs = torch.softmax(logits, dim=-1)
            model_output["entropy"] = torch.logsumexp(logits, dim=-1) - (probs * logits).sum(-1)
        return model_output

    def forward_step(self, micro_batch, loss_function, forward_only):
        micro_batch = micro_batch.to(torch.cuda.current_device())
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            raw_output = self.module(
                input_ids=micro_batch.batch["input_ids"],
                attention_mask=micro_batch.batch["attention_mask"],
                position_ids=micro_batch.batch["position_ids"],
                use_cache=False,
            )
            calculate_entropy = micro_batch.meta_info.get("calculate_entropy", False)
            model_output = self.prepare_model_outputs(raw_output, micro_batch, calculate_entropy)
            if loss_function is not None:
                loss, metrics = loss_function(model_output=model_output, data=micro_batch, dp_group=self.dp_group)
            else:
                loss = torch.tensor(1.0, device="cuda")
                metrics = {}
        output = {
            "model_output": model_output,
            "loss": loss.detach().item(),
            "metrics": metrics,
        }
        return loss, output

    def forward_backward_batch(self, data, loss_function, forward_only=False):
        micro_batches, indices = prepare_micro_batches(data=data, dp_group=self.dp_group)
        output_lst = []
        ctx = torch.no_grad() if forward_only else nullcontext()
        for micro_batch in micro_batches:
            with ctx:
                loss, meta_info = self.forward_step(micro_batch, loss_function=loss_function, forward_only=forward_only)
                if not forward_only:
                    local_bsz = micro_batch.batch["input_ids"].shape[0]
                    loss_scale_factor = local_bsz / (data.meta_info["global_batch_size"] / self.dp_size)
                    (loss * loss_scale_factor).backward()
            output_lst.append(meta_info)  # expect: TML001
        return postprocess_batch_func(output_lst=output_lst, indices=indices, data=data)

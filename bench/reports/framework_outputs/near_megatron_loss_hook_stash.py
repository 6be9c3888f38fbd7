# Source: https://github.com/ISEEKYAN/Megatron-LM/pull/177
# Report: the cp=0 output rank grew ~0.5 GB per micro-batch because the loss hook stashed graph-attached log_probs; the fix detaches every tensor in model_output before the per-micro-batch copy is stashed, leaving the live one for the loss
# Shape: fixed version: the loss hook closure still appends one dict per micro-batch to output_lst, but model_output is detached first (the loss itself still sees the attached tensors)
# Expect: near-miss: must be silent
from functools import partial

import torch
import torch.distributed.nn.functional as dist_nn
from megatron.core import parallel_state as mpu
from megatron.core.pipeline_parallel import get_forward_backward_func


class MegatronLiteEngine:
    def __init__(self, module, cp_group, micro_batch_size):
        self.module = module
        self.cp_group = cp_group
        self.micro_batch_size = micro_batch_size

    def unpack_forward_output(self, output, batch):
        if mpu.get_context_parallel_world_size() > 1:
            gathered = dist_nn.all_gather(output, group=self.cp_group)
            output = torch.cat(gathered, dim=1)
        response_length = batch["responses"].size(-1)
        logits = output[:, -response_length - 1 : -1, :].float()
        log_probs = torch.log_softmax(logits, dim=-1)
        log_probs = log_probs.gather(-1, batch["responses"].unsqueeze(-1)).squeeze(-1)
        return {"log_probs": torch.nested.as_nested_tensor(list(log_probs))}

    def is_mp_src_rank_with_outputs(self):
        return (
            mpu.get_tensor_model_parallel_rank() == 0
            and mpu.get_context_parallel_rank() == 0
            and mpu.is_pipeline_last_stage(ignore_virtual=True)
        )

    def forward_backward_batch(self, data, loss_function, forward_only=False):
        micro_batches = data.split(self.micro_batch_size)
        output_lst = [] if self.is_mp_src_rank_with_outputs() else None

        def loss_func(output_tensor, batch):
            model_output = self.unpack_forward_output(output_tensor, batch)
            loss, metrics = loss_function(model_output=model_output, data=batch)
            if output_lst is not None:
                stashed = {key: value.detach() for key, value in model_output.items()}
                output_lst.append({"model_output": stashed, "loss": loss.detach(), "metrics": metrics})
            return loss, {}

        def forward_step(batch_iter, model):
            batch = next(batch_iter)
            output = model(
                input_ids=batch["input_ids"],
                position_ids=batch["position_ids"],
                attention_mask=batch["attention_mask"],
            )
            return output, partial(loss_func, batch=batch)

        forward_backward_func = get_forward_backward_func()
        forward_backward_func(
            forward_step_func=forward_step,
            data_iterator=iter(micro_batches),
            model=self.module,
            num_microbatches=len(micro_batches),
            seq_length=data["input_ids"].shape[1],
            micro_batch_size=self.micro_batch_size,
            forward_only=forward_only,
        )
        return output_lst

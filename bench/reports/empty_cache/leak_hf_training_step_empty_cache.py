# Source: https://github.com/huggingface/transformers/pull/31530
# Report: a torch.cuda.empty_cache() call added to Trainer.training_step (transformers#28769) ran on every step and slowed training down noticeably (issue #31372); the PR removes it from the train loop.
# Shape: a Trainer-like class whose per-step training_step computes the loss, drops the inputs and then empties the CUDA cache before backward; _inner_training_loop calls it once per batch and folds the detached step loss into tr_loss.
# Expect: TML009 line 29
import torch


class Trainer:
    def __init__(self, model, args, optimizer, lr_scheduler, accelerator):
        self.model = model
        self.args = args
        self.optimizer = optimizer
        self.lr_scheduler = lr_scheduler
        self.accelerator = accelerator

    def _prepare_inputs(self, inputs):
        return {k: v.to(self.args.device) for k, v in inputs.items()}

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs["loss"] if isinstance(outputs, dict) else outputs[0]

    def training_step(self, model, inputs):
        model.train()
        inputs = self._prepare_inputs(inputs)
        loss = self.compute_loss(model, inputs)

        del inputs
        torch.cuda.empty_cache()  # expect: TML009

        if self.args.n_gpu > 1:
            loss = loss.mean()
        self.accelerator.backward(loss)
        return loss.detach() / self.args.gradient_accumulation_steps

    def _inner_training_loop(self, train_dataloader, num_train_epochs):
        model = self.model
        tr_loss = torch.tensor(0.0, device=self.args.device)
        global_step = 0
        for epoch in range(num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                tr_loss_step = self.training_step(model, inputs)
                tr_loss += tr_loss_step
                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    self.accelerator.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    global_step += 1
        return global_step, tr_loss.item() / max(global_step, 1)

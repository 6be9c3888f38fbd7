# Source: https://github.com/huggingface/transformers/pull/6999
# Report: Trainer accumulated tr_loss from training_step() without detaching, keeping autograd state alive for every step, so RAM grew until a Colab session died after about 20k steps.
# Shape: a Trainer-style class whose training_step() helper returns the live loss tensor; the epoch loop adds each returned value into a device tensor that lives for the whole run.
# Expect: TML001 line 40
import torch


class Trainer:
    def __init__(self, model, optimizer, scheduler, args):
        self.model = model
        self.optimizer = optimizer
        self.lr_scheduler = scheduler
        self.args = args
        self.global_step = 0

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs["loss"] if isinstance(outputs, dict) else outputs[0]

    def training_step(self, model, inputs):
        model.train()
        inputs = {k: v.to(self.args.device) for k, v in inputs.items()}
        loss = self.compute_loss(model, inputs)
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss

    def log(self, logs):
        print({k: round(v, 4) for k, v in logs.items()})

    def train(self, train_dataloader, num_train_epochs):
        model = self.model
        tr_loss = torch.tensor(0.0).to(self.args.device)
        logging_loss_scalar = 0.0
        model.zero_grad()

        for epoch in range(num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                tr_loss += self.training_step(model, inputs)  # expect: TML001

                if (step + 1) % self.args.gradient_accumulation_steps == 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                    self.optimizer.step()
                    self.lr_scheduler.step()
                    model.zero_grad()
                    self.global_step += 1

                    if self.global_step % self.args.logging_steps == 0:
                        tr_loss_scalar = tr_loss.item()
                        self.log({"loss": (tr_loss_scalar - logging_loss_scalar) / self.args.logging_steps})
                        logging_loss_scalar = tr_loss_scalar

        return self.global_step, tr_loss.item() / max(self.global_step, 1)

# Source: https://github.com/pai4451/ML2021/issues/2
# Report: Running the HW7 (BERT extractive QA) training example, CPU RAM kept rising until 64 GB were used; `train_loss += output.loss` kept the computation graph, and changing it to `.detach()` / `.item()` fixed it.
# Shape: a helper runs the forward pass and returns the Hugging Face output object; the loop adds its `.loss` attribute (still attached to the graph) into a running total kept for the whole epoch.
# Expect: TML001 line 36
import torch
from torch.utils.data import DataLoader
from transformers import BertForQuestionAnswering


def forward_batch(model, batch, device):
    input_ids, token_type_ids, attention_mask, start_pos, end_pos = [t.to(device) for t in batch]
    return model(
        input_ids=input_ids,
        token_type_ids=token_type_ids,
        attention_mask=attention_mask,
        start_positions=start_pos,
        end_positions=end_pos,
    )


def batch_accuracy(output, batch):
    start_index = torch.argmax(output.start_logits, dim=1).cpu()
    end_index = torch.argmax(output.end_logits, dim=1).cpu()
    return ((start_index == batch[3]) & (end_index == batch[4])).float().mean()


def train(model: BertForQuestionAnswering, train_loader: DataLoader, optimizer, scheduler,
          device, num_epoch=1, logging_step=100):
    model.train()
    for epoch in range(num_epoch):
        step = 1
        train_loss = train_acc = 0
        for batch in train_loader:
            output = forward_batch(model, batch, device)
            train_acc += batch_accuracy(output, batch)
            train_loss += output.loss  # expect: TML001
            output.loss.backward()
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad()
            step += 1
            if step % logging_step == 0:
                print(f"Epoch {epoch + 1} | Step {step} | "
                      f"loss = {float(train_loss) / step:.3f}, acc = {float(train_acc) / step:.3f}")
        print(f"Epoch {epoch + 1} done, mean loss {float(train_loss) / step:.3f}")

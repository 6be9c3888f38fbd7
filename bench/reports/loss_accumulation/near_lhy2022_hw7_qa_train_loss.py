# Source: https://github.com/WSKH0929/LHY_DeepLearning_2022/blob/734ea36c9069d2e8f7d51d1f18ae8548499ab2d6/LHY_DeepLearning_2022/HomeWork07(Doesnt_Work)/TrainFunction.py
# Report: fixed variant of the audited bug in the HW7 (BERT extractive QA) training loop: train_loss += output.loss keeps every step's loss tensor and its autograd history until the logging reset
# Shape: same loop, but the loss read from the helper-returned output is detached before it is added to train_loss (a device scalar with no history)
# Expect: near-miss: must be silent
import torch
from tqdm import tqdm
from torch.optim import AdamW


def forward_batch(model, data):
    # Model inputs: input_ids, token_type_ids, attention_mask, start/end positions
    return model(
        input_ids=data[0],
        token_type_ids=data[1],
        attention_mask=data[2],
        start_positions=data[3],
        end_positions=data[4],
    )


def span_accuracy(output, data):
    start_index = torch.argmax(output.start_logits, dim=1)
    end_index = torch.argmax(output.end_logits, dim=1)
    return ((start_index == data[3]) & (end_index == data[4])).float().mean()


def train(train_loader, valid_loader, val_questions, model, tokenizer, config, device):
    logging_step = config["logging_step"]
    optimizer = AdamW(model.parameters(), lr=config["lr"])

    for epoch in range(config["num_epoch"]):
        model.train()
        step = 1
        train_loss = train_acc = 0

        for data in tqdm(train_loader):
            data = [t.to(device) for t in data]
            output = forward_batch(model, data)

            train_acc += span_accuracy(output, data)
            train_loss += output.loss.detach()

            output.loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            step += 1

            if step % logging_step == 0:
                print(
                    f"Epoch {epoch + 1} | Step {step} | "
                    f"loss = {train_loss.item() / logging_step:.3f}, acc = {train_acc / logging_step:.3f}"
                )
                train_loss = train_acc = 0

        val_acc = valid(valid_loader, model, tokenizer, val_questions, device)
        print(f"Validation | Epoch {epoch + 1} | acc = {val_acc / len(valid_loader):.3f}")


def valid(valid_loader, model, tokenizer, val_questions, device):
    model.eval()
    val_acc = 0
    with torch.no_grad():
        for i, data in enumerate(tqdm(valid_loader)):
            output = model(
                input_ids=data[0].squeeze(dim=0).to(device),
                token_type_ids=data[1].squeeze(dim=0).to(device),
                attention_mask=data[2].squeeze(dim=0).to(device),
            )
            val_acc += decode_answer(data, output, tokenizer) == val_questions[i]["answer_text"]
    return val_acc


def decode_answer(data, output, tokenizer):
    answer, max_prob = "", float("-inf")
    for k in range(data[0].shape[1]):
        start_prob, start_index = torch.max(output.start_logits[k], dim=0)
        end_prob, end_index = torch.max(output.end_logits[k], dim=0)
        prob = start_prob + end_prob
        if prob > max_prob:
            max_prob = prob
            answer = tokenizer.decode(data[0][0][k][start_index: end_index + 1])
    return answer.replace(" ", "")

# Source: https://github.com/OpenDriveLab/Openpilot-Deepdive/issues/6
# Report: A user asked why the GRU is trained one frame at a time with a backward pass every 40 steps, only detaching (not zeroing) the hidden state; the maintainer said this keeps the state continuous like the deployed model while fitting long sequences in limited GPU memory.
# Shape: hidden is carried across time steps and the summed loss grows for a window, but every optimize_per_n_step steps the hidden state is `.clone().detach()`-ed, the window loss is backpropagated and reset to 0, so at most one window of graph is ever alive.
# Expect: near-miss: must be silent
import torch


def train_epoch(model, loader, loss_fn, optimizer, writer, mtp_alpha=1.0,
                optimize_per_n_step=40, num_steps=0):
    model.train()
    for data in loader:
        seq_inputs = data["seq_input_img"].cuda()
        seq_labels = data["seq_future_poses"].cuda()
        bs, seq_length = seq_labels.size(0), seq_labels.size(1)

        hidden = torch.zeros((2, bs, 512), device=seq_inputs.device)
        total_loss = 0
        for t in range(seq_length):
            num_steps += 1
            inputs, labels = seq_inputs[:, t], seq_labels[:, t]
            pred_cls, pred_trajectory, hidden = model(inputs, hidden)
            cls_loss, reg_loss = loss_fn(pred_cls, pred_trajectory, labels)
            total_loss += (cls_loss + mtp_alpha * reg_loss.mean()) / optimize_per_n_step

            if (t + 1) % optimize_per_n_step == 0:
                hidden = hidden.clone().detach()
                optimizer.zero_grad()
                total_loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                writer.add_scalar("loss/total", total_loss.item(), num_steps)
                total_loss = 0

        if not isinstance(total_loss, int):
            optimizer.zero_grad()
            total_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
    return num_steps
